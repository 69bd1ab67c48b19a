# GPU kernel benchmarks on the pipeline's prepared graphs and batch files: part of `figures`
# with `backend: gpu` (the bench figures plot these tables), or alone: `snakemake --cores 1 bench`.
# Parameters: config.yaml's `bench` section, the seed and the reference tolerance.
# Needs a CUDA device: without one the Snakefile's onstart refuses the run in one line, before any job.


rule bench:
    input:
        unpack(bench_rule_inputs),
    output:
        static="results/bench/static_variants.csv",
        ablation="results/bench/partition_ablation.csv",
        kahn="results/bench/kahn.csv",
    log:
        "results/logs/bench.log",
    conda:
        "../envs/dynpr-gpu.yaml"
    resources:
        gpu=1,
        timing=1,
        mem_mb=bench_mem_mb,
    params:
        **config["bench"],
        bench_graphs=bench_graph_names(),
        batch_files=bench_batch_files(),
        seed=config["seed"],
        reference_tolerance=config["pagerank"]["reference_tolerance"],
    script:
        "../scripts/bench_gpu_tables.py"
