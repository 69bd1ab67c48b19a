# Experiments of the paper's section 5: one job per dataset (temporal or random
# batches, every approach, plus Kahn), then all runs in one summary table.
# Rerun one dataset: snakemake --cores 1 figures --forcerun results/runs/CollegeMsg.csv
# GPU vs CPU (Fig. 6-8): snakemake --cores 1 figures --config compare_backends=True
# (the summary then takes in results/runs/{other backend}/*.csv, run as part of the DAG).


rule run_experiment:
    input:
        unpack(run_inputs),
    output:
        "results/runs/{dataset}.csv",
    log:
        "results/logs/run/{dataset}.log",
    benchmark:
        "results/benchmarks/run_{dataset}.tsv"
    conda:
        backend_env(config["backend"])
    resources:
        gpu=run_gpus,
        mem_mb=run_mem_mb,
        gpu_mem_mb=run_gpu_mem_mb,
        timing=1,
    params:
        experiment=lambda wildcards: run_experiment_kind(wildcards.dataset),
        fractions=run_fractions,
        approaches=config["approaches"],
        backend=config["backend"],
        pagerank=config["pagerank"],
        repeat=config["repeat"],
    script:
        "../scripts/run_experiment.py"


# The same experiment on the backend the main runs do not use.
use rule run_experiment as run_experiment_on_backend with:
    output:
        "results/runs/{backend}/{dataset}.csv",
    log:
        "results/logs/run/{backend}/{dataset}.log",
    benchmark:
        "results/benchmarks/run_{backend}_{dataset}.tsv"
    wildcard_constraints:
        backend="cpu|gpu",
    conda:
        backend_env(OTHER_BACKEND)
    resources:
        gpu=run_gpus,
        mem_mb=run_mem_mb,
        gpu_mem_mb=run_gpu_mem_mb,
        timing=1,
    params:
        experiment=lambda wildcards: run_experiment_kind(wildcards.dataset),
        fractions=run_fractions,
        approaches=config["approaches"],
        backend=lambda wildcards: wildcards.backend,
        pagerank=config["pagerank"],
        repeat=config["repeat"],


rule compare_backends:
    input:
        other_backend_targets(),


rule summary:
    input:
        summary_inputs(),
    output:
        report("results/summary.csv", caption="../report/summary.rst", category="Tables"),
    log:
        "results/logs/summary.log",
    conda:
        "../envs/dynpr.yaml"
    script:
        "../scripts/summarize.py"
