# Datasets: download upstream files into datasets/raw/ and prepare graphs
# (CSR + transpose + stats) as results/graphs/{dataset}.npz/.json.
# Input paths come from datasets/catalog.yaml via the helpers in common.smk.


rule download:
    output:
        "datasets/raw/{file}",
    log:
        "results/logs/download/{file}.log",
    benchmark:
        "results/benchmarks/download_{file}.tsv"
    wildcard_constraints:
        file=RAW_FILE_PATTERN,
    conda:
        "../envs/dynpr.yaml"
    params:
        # sha256/size are read at run time (catalog + lock file): recording a lock entry
        # must not make Snakemake re-download the file and rerun everything after it
        url=lambda wildcards: raw_dataset(wildcards.file).url,
    script:
        "../scripts/download.py"


rule prepare:
    input:
        dataset_source,
    output:
        npz="results/graphs/{dataset}.npz",
        json="results/graphs/{dataset}.json",
    log:
        "results/logs/prepare/{dataset}.log",
    benchmark:
        "results/benchmarks/prepare_{dataset}.tsv"
    conda:
        "../envs/dynpr.yaml"
    resources:
        mem_mb=prepare_mem_mb,
        gpu=prepare_gpus,
    script:
        "../scripts/prepare.py"
