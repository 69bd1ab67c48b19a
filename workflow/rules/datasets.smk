# Datasets: download upstream files into datasets/raw/ and prepare graphs
# (CSR + transpose + stats) as results/graphs/{dataset}.npz/.json.
# Input paths come from datasets/catalog.yaml via the helpers in common.smk.


rule download:
    output:
        "datasets/raw/{file}",
    params:
        url=lambda wildcards: raw_dataset(wildcards.file).url,
        sha256=lambda wildcards: raw_dataset(wildcards.file).sha256,
        size=lambda wildcards: raw_dataset(wildcards.file).size,
    log:
        "results/logs/download/{file}.log",
    benchmark:
        "results/benchmarks/download_{file}.tsv"
    wildcard_constraints:
        file=RAW_FILE_PATTERN,
    conda:
        "../envs/dynpr.yaml"
    script:
        "../scripts/download.py"


rule prepare:
    input:
        dataset_source,
    output:
        npz="results/graphs/{dataset}.npz",
        json="results/graphs/{dataset}.json",
    resources:
        mem_mb=prepare_mem_mb,
    log:
        "results/logs/prepare/{dataset}.log",
    benchmark:
        "results/benchmarks/prepare_{dataset}.tsv"
    conda:
        "../envs/dynpr.yaml"
    script:
        "../scripts/prepare.py"
