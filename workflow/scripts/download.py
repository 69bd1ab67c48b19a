"""Rule download: fetch one upstream file into datasets/raw/ (mirror aware, verified)."""

import logging

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.file, snakemake.log[0]) as log:
    from dynpr.io.catalog import dataset_for_file, load_catalog
    from dynpr.io.download import download, resolve_mirror

    log.lap("start and imports")
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s")
    # read at run time, not a param: changing the mirror must not invalidate downloads
    mirror = resolve_mirror(snakemake.config.get("mirror"))
    dataset = dataset_for_file(snakemake.wildcards.file, load_catalog("datasets/catalog.yaml"))
    download(snakemake.params.url, snakemake.output[0], sha256=dataset.sha256, size=dataset.size, mirror=mirror)
    log.lap("work")
