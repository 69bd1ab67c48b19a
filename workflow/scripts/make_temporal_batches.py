"""Rule temporal_batches: consecutive insertion batches after the temporal base (seed 003, 5.1.4)."""

import logging

from dynpr.batches import temporal_batches, write_batches
from dynpr.prepare import load_prepared

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO, format="%(message)s")
dataset = snakemake.wildcards.dataset
params = snakemake.params
graph, temporal = load_prepared(snakemake.input[0])
if temporal is None:
    raise ValueError(f"{snakemake.input[0]}: {dataset} has no temporal edges (temporal_src/temporal_dst)")
src, dst, _time = temporal
_base, batches, stats = temporal_batches(
    src, dst, graph.num_vertices, params.base_fraction, params.fraction, params.num_batches
)
write_batches(
    snakemake.output[0], batches,
    dataset=dataset, experiment="temporal", fraction=float(params.fraction),
    base_fraction=float(params.base_fraction), num_batches=int(params.num_batches),
    batch_size=stats.batch_size, temporal_edges=stats.temporal_edges, base_events=stats.base_events,
)
logging.info(
    "%s: %d batches of B=%d temporal edges; read %d, inserted %d, dropped %d present, "
    "%d repeated in their batch, %d self-loops; %d batches empty; %d short batches%s",
    snakemake.output[0], len(batches), stats.batch_size, stats.events.sum(), stats.inserted.sum(),
    stats.dropped_present.sum(), stats.dropped_repeated.sum(), stats.dropped_self_loops.sum(),
    sum(b.insertions == 0 for b in batches), stats.short_batches, " (temporal edges ran out)" if stats.short_batches else "",
)
