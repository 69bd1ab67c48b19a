# Batch updates (paper section 5.1.4) from prepared graphs: temporal slices for
# temporal datasets, 80/20 random batches for static ones. Targets: batch_targets().


rule all_batches:
    input:
        all_batch_targets(),


rule temporal_base:
    input:
        "results/graphs/{dataset}.npz",
    output:
        "results/batches/{dataset}/temporal_base.npz",
    log:
        "results/logs/batches/{dataset}/temporal_base.log",
    benchmark:
        "results/benchmarks/temporal_base_{dataset}.tsv"
    conda:
        "../envs/dynpr.yaml"
    resources:
        mem_mb=batches_mem_mb("temporal_base"),
    params:
        base_fraction=config["temporal"]["base_fraction"],
    script:
        "../scripts/make_temporal_base.py"


rule temporal_batches:
    input:
        "results/graphs/{dataset}.npz",
    output:
        "results/batches/{dataset}/temporal_{fraction}.npz",
    log:
        "results/logs/batches/{dataset}/temporal_{fraction}.log",
    benchmark:
        "results/benchmarks/temporal_batches_{dataset}_{fraction}.tsv"
    conda:
        "../envs/dynpr.yaml"
    resources:
        mem_mb=batches_mem_mb("temporal_batches"),
    params:
        fraction=lambda wildcards: float(wildcards.fraction),
        base_fraction=config["temporal"]["base_fraction"],
        num_batches=config["temporal"]["num_batches"],
    script:
        "../scripts/make_temporal_batches.py"


rule random_batches:
    input:
        "results/graphs/{dataset}.npz",
    output:
        "results/batches/{dataset}/random_{fraction}.npz",
    log:
        "results/logs/batches/{dataset}/random_{fraction}.log",
    benchmark:
        "results/benchmarks/random_batches_{dataset}_{fraction}.tsv"
    conda:
        "../envs/dynpr.yaml"
    resources:
        mem_mb=batches_mem_mb("random_batches"),
    params:
        fraction=lambda wildcards: float(wildcards.fraction),
        insert_share=config["random"]["insert_share"],
        repeats=config["random"]["repeats"],
        seed=config["seed"],
    script:
        "../scripts/make_random_batches.py"
