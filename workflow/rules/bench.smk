# GPU benchmarks of issue 7 (not part of the default `figures` target, which
# plots these tables when they exist): `snakemake --cores 1 bench`, then
# `snakemake --cores 1 figures`. Parameters: config.yaml's `bench` section.
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
    conda:
        "../envs/dynpr-gpu.yaml"
    script:
        "../scripts/bench_gpu_tables.py"
