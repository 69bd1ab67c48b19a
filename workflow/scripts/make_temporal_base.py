"""Rule temporal_base: the base graph of the temporal experiment (paper 5.1.4)."""

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    import numpy as np

    from dynpr.batches import temporal_base
    from dynpr.prepare import load_prepared

    dataset = snakemake.wildcards.dataset
    graph, temporal = load_prepared(snakemake.input[0])
    if temporal is None:
        raise ValueError(f"{snakemake.input[0]}: {dataset} has no temporal edges (temporal_src/temporal_dst)")
    src, dst, _time = temporal
    base, base_events = temporal_base(src, dst, graph.num_vertices, snakemake.params.base_fraction)
    base.save(
        snakemake.output[0],
        param_dataset=np.asarray(dataset),
        param_experiment=np.asarray("temporal"),
        param_base_fraction=np.asarray(float(snakemake.params.base_fraction)),
        param_temporal_edges=np.asarray(len(src)),
        param_base_events=np.asarray(base_events),
    )
    log(f"{snakemake.output[0]}: {base_events} of {len(src)} temporal edges -> {base.num_vertices} vertices, "
        f"{base.num_edges} edges (self-loop on every vertex included)")
