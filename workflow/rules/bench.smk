# GPU benchmarks of issue 7 (not part of the default `figures` target, which
# plots these tables when they exist): `snakemake --cores 1 bench`.
# Needs a CUDA device; without one the job fails with "bench needs a GPU: ...".


rule bench:
    output:
        static="results/bench/static_variants.csv",
        ablation="results/bench/partition_ablation.csv",
        kahn="results/bench/kahn.csv",
    params:
        graphs=["CollegeMsg", "sx-mathoverflow", "soc-Epinions1", "web-NotreDame", "rmat20-gpu", "rmat22-gpu"],
        repeats=5,
        ablation_graphs=["sx-mathoverflow", "rmat20-gpu"],
        fractions=[1e-5, 1e-4, 1e-3],
        batches=20,
        random_batches=3,
    log:
        "results/logs/bench.log",
    resources:
        gpu=1,
    script:
        "../scripts/bench_gpu_tables.py"
