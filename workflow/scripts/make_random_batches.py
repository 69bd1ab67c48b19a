"""Rule random_batches: repeats of an 80/20 random batch on a static graph (paper 5.1.4)."""

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.batches import batch_rng, random_batch, write_batches
    from dynpr.prepare import load_prepared

    dataset = snakemake.wildcards.dataset
    p = snakemake.params
    graph, _temporal = load_prepared(snakemake.input[0])
    edges = graph.num_edges - graph.num_self_loops  # |E| of the batch sizes: self-loops excluded
    batches = [
        random_batch(graph, p.fraction, p.insert_share, batch_rng(p.seed, dataset, p.fraction, r))
        for r in range(p.repeats)
    ]
    write_batches(
        snakemake.output[0], batches, made_for=graph,
        dataset=dataset, experiment="random", fraction=float(p.fraction),
        insert_share=float(p.insert_share), repeats=int(p.repeats), seed=int(p.seed), edges=edges,
    )
    log(f"{snakemake.output[0]}: {len(batches)} batches on |E|={edges} non-self-loop edges, "
        f"{'/'.join(str(b.insertions) for b in batches)} insertions, "
        f"{'/'.join(str(b.deletions) for b in batches)} deletions")
