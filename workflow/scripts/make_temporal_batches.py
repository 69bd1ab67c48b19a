"""Rule temporal_batches: consecutive insertion batches after the temporal base (paper 5.1.4)."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.io.prepare import check_prepared_file
    from dynpr.pipeline.files import temporal_batch_file

    check_prepared_file(snakemake.input[0], snakemake.wildcards.dataset)  # not another graph's file
    p = snakemake.params
    log(temporal_batch_file(snakemake.input[0], snakemake.output[0], snakemake.wildcards.dataset, p.fraction,
                            p.base_fraction, p.num_batches))
