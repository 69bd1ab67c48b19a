"""Rule temporal_batches: consecutive insertion batches after the temporal base (paper 5.1.4)."""

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.batches import temporal_batches, write_batches
    from dynpr.prepare import load_prepared

    dataset = snakemake.wildcards.dataset
    p = snakemake.params
    graph, temporal = load_prepared(snakemake.input[0])
    if temporal is None:
        raise ValueError(f"{snakemake.input[0]}: {dataset} has no temporal edges (temporal_src/temporal_dst)")
    src, dst, _time = temporal
    base, batches, stats = temporal_batches(src, dst, graph.num_vertices, p.base_fraction, p.fraction, p.num_batches)
    write_batches(
        snakemake.output[0], batches, made_for=base,
        dataset=dataset, experiment="temporal", fraction=float(p.fraction),
        base_fraction=float(p.base_fraction), num_batches=int(p.num_batches),
        batch_size=stats.batch_size, temporal_edges=stats.temporal_edges, base_events=stats.base_events,
    )
    empty = sum(b.insertions == 0 for b in batches)
    log(f"{snakemake.output[0]}: {len(batches)} batches of B={stats.batch_size} temporal edges; "
        f"read {stats.events.sum()}, inserted {stats.inserted.sum()}, dropped {stats.dropped_present.sum()} present, "
        f"{stats.dropped_repeated.sum()} repeated in their batch, {stats.dropped_self_loops.sum()} self-loops; "
        f"{empty} batches empty; {stats.short_batches} short batches"
        + (" (temporal edges ran out)" if stats.short_batches else ""))
