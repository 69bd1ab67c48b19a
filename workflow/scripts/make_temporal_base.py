"""Rule temporal_base: the base graph of the temporal experiment (paper 5.1.4)."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.io.prepare import check_prepared_file
    from dynpr.pipeline.files import temporal_base_file

    check_prepared_file(snakemake.input[0], snakemake.wildcards.dataset)  # not another graph's file
    log(temporal_base_file(snakemake.input[0], snakemake.output[0], snakemake.wildcards.dataset,
                           snakemake.params.base_fraction))
