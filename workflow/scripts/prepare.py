"""Rule prepare: parse (or generate) one dataset, check it against the catalog, write npz + json."""

import logging

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.catalog import get_dataset
    from dynpr.prepare import prepare

    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s")
    dataset = get_dataset(snakemake.wildcards.dataset, "datasets/catalog.yaml")
    stats = prepare(dataset, snakemake.output.npz, snakemake.output.json,
                    source=snakemake.input[0] if len(snakemake.input) else None)
    log(f"{dataset.name}: {stats['vertices']} vertices ({stats['distinct_vertices']} distinct ids), "
        f"{stats['edges']} edges, {stats['edges_with_self_loops']} with self-loops")
