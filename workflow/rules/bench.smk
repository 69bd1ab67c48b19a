# GPU kernel benchmarks: part of `figures` with `backend: gpu` (the bench figures plot these
# tables), or alone: `snakemake --cores 1 bench`. Parameters: config.yaml's `bench` section.
# Needs a CUDA device; without one the job fails with "bench needs a GPU: ...".


rule bench:
    output:
        static="results/bench/static_variants.csv",
        ablation="results/bench/partition_ablation.csv",
        kahn="results/bench/kahn.csv",
    params:
        **config["bench"],
    log:
        "results/logs/bench.log",
    resources:
        gpu=1,
    script:
        "../scripts/bench_gpu_tables.py"
