"""Rule temporal_batches: a temporal graph's base and its insertion batches at every fraction (paper 5.1.4)."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.io.prepare import check_prepared_file
    from dynpr.pipeline.files import temporal_batch_files

    log.lap("start and imports")
    check_prepared_file(snakemake.input[0], snakemake.wildcards.dataset)  # not another graph's file
    p = snakemake.params
    temporal_batch_files(snakemake.input[0], snakemake.output.base,
                         dict(zip(p.fractions, snakemake.output.batches, strict=True)), snakemake.wildcards.dataset,
                         p.base_fraction, p.num_batches, log=log, lap=log.lap)
