"""Rule prepare: parse (or generate) one dataset, check it against the catalog, write npz + json."""

import contextlib
import logging

from dynpr.pipeline.device_claims import claim_device
from dynpr.pipeline.jobs import script_errors

gpu = snakemake.resources.get("gpu", 0)  # R-MAT graphs the GPU may generate (common.smk: prepare_gpus)
with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log, (
    claim_device(report=log) if gpu else contextlib.nullcontext()
):
    from dynpr.io.catalog import get_dataset
    from dynpr.io.prepare import prepare

    log.lap("start and imports")
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s")
    dataset = get_dataset(snakemake.wildcards.dataset, "datasets/catalog.yaml")
    stats = prepare(dataset, snakemake.output.npz, snakemake.output.json,
                    source=snakemake.input[0] if len(snakemake.input) else None,
                    backend=snakemake.config["backend"] if gpu else "cpu")
    log.lap("work")  # parsing or generating, checks and writing: dynpr.io.prepare logs its steps' times
    log(f"{dataset.name}: {stats['vertices']} vertices ({stats['distinct_vertices']} distinct ids), "
        f"{stats['edges']} edges, {stats['edges_with_self_loops']} with self-loops")
