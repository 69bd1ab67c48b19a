# dynpr's Static beside its peers on the pipeline's prepared graphs: library peers (cuSPARSE and
# torch.sparse power iterations) and the programs named in the config's `peers` section (Gunrock's
# `pr`, Hornet's PageRank test). In the DAG with a `peers` section (common.smk: peer_targets);
# alone: `snakemake --cores 1 all_peers`. A rebuilt program at the same path is not noticed:
# rerun with --forcerun peers.


rule peers:
    input:
        graph="results/graphs/{dataset}.npz",
    output:
        "results/peers/{dataset}.csv",
    log:
        "results/logs/peers/{dataset}.log",
    benchmark:
        "results/benchmarks/peers_{dataset}.tsv"
    conda:
        backend_env(config["backend"])
    resources:
        gpu=RUN_GPUS,
        mem_mb=peers_mem_mb,
        timing=1,
    params:
        peers=PEERS,
        pagerank=config["pagerank"],
        backend=config["backend"],
        repeat=config["repeat"],
    script:
        "../scripts/peers.py"


rule all_peers:
    input:
        peer_targets(),
