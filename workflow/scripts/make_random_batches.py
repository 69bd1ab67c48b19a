"""Rule random_batches: a static graph's 80/20 random batches at every fraction (paper 5.1.4)."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.io.prepare import check_prepared_file
    from dynpr.pipeline.files import random_batch_files

    log.lap("start and imports")
    check_prepared_file(snakemake.input[0], snakemake.wildcards.dataset)  # not another graph's file
    p = snakemake.params
    random_batch_files(snakemake.input[0], dict(zip(p.fractions, snakemake.output, strict=True)),
                       snakemake.wildcards.dataset, p.insert_share, p.repeats, p.seed, log=log, lap=log.lap)
