"""Rule random_batches: repeats of an 80/20 random batch on a static graph (seed 003, 5.1.4)."""

import logging

import numpy as np

from dynpr.batches import batch_rng, random_batch, write_batches
from dynpr.prepare import load_prepared

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO, format="%(message)s")
dataset = snakemake.wildcards.dataset
params = snakemake.params
graph, _temporal = load_prepared(snakemake.input[0])
src, dst = graph.edges()
edges = int(np.count_nonzero(src != dst))  # |E| of the batch sizes: self-loops excluded
batches = [
    random_batch(graph, params.fraction, params.insert_share, batch_rng(params.seed, dataset, params.fraction, r))
    for r in range(params.repeats)
]
write_batches(
    snakemake.output[0], batches,
    dataset=dataset, experiment="random", fraction=float(params.fraction),
    insert_share=float(params.insert_share), repeats=int(params.repeats), seed=int(params.seed), edges=edges,
)
logging.info(
    "%s: %d batches on |E|=%d non-self-loop edges, %s insertions, %s deletions",
    snakemake.output[0], len(batches), edges,
    "/".join(str(b.insertions) for b in batches), "/".join(str(b.deletions) for b in batches),
)
