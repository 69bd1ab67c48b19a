# Experiments of seed 003, section 5: one job per dataset (temporal or random
# batches, every approach, plus Kahn), then all runs in one summary table.
# Rerun one dataset: snakemake --cores 1 --forcerun results/runs/CollegeMsg.csv figures


rule run_experiment:
    input:
        unpack(run_inputs),
    output:
        "results/runs/{dataset}.csv",
    params:
        experiment=lambda wildcards: run_experiment_kind(wildcards.dataset),
        fractions=run_fractions,
        approaches=config["approaches"],
        backend=config["backend"],
        pagerank=config["pagerank"],
        repeat=config["repeat"],
    log:
        "results/logs/run/{dataset}.log",
    benchmark:
        "results/benchmarks/run_{dataset}.tsv"
    resources:
        gpu=RUN_GPUS,
    script:
        "../scripts/run_experiment.py"


rule summary:
    input:
        run_targets(),
    output:
        "results/summary.csv",
    log:
        "results/logs/summary.log",
    script:
        "../scripts/summarize.py"
