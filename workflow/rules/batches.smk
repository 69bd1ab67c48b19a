# Batch updates (paper section 5.1.4) from prepared graphs: temporal slices for
# temporal datasets, 80/20 random batches for static ones. One job per dataset writes
# every fraction's file (the graph loaded once); rerun one dataset's batches with
# --forcerun results/batches/{dataset}/<any of its files>. Targets: batch_targets().


rule all_batches:
    input:
        all_batch_targets(),


rule temporal_batches:
    input:
        "results/graphs/{dataset}.npz",
    output:
        base="results/batches/{dataset}/temporal_base.npz",
        batches=batch_outputs("temporal"),
    log:
        "results/logs/batches/{dataset}/temporal.log",
    benchmark:
        "results/benchmarks/temporal_batches_{dataset}.tsv"
    conda:
        "../envs/dynpr.yaml"
    resources:
        mem_mb=batches_mem_mb("temporal_batches"),
    params:
        fractions=batch_fractions("temporal"),
        base_fraction=config["temporal"]["base_fraction"],
        num_batches=config["temporal"]["num_batches"],
    script:
        "../scripts/make_temporal_batches.py"


rule random_batches:
    input:
        "results/graphs/{dataset}.npz",
    output:
        batch_outputs("random"),
    log:
        "results/logs/batches/{dataset}/random.log",
    benchmark:
        "results/benchmarks/random_batches_{dataset}.tsv"
    conda:
        "../envs/dynpr.yaml"
    resources:
        mem_mb=batches_mem_mb("random_batches"),
    params:
        fractions=batch_fractions("random"),
        insert_share=config["random"]["insert_share"],
        repeats=config["random"]["repeats"],
        seed=config["seed"],
    script:
        "../scripts/make_random_batches.py"
