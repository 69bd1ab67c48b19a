"""Rule random_batches: repeats of an 80/20 random batch on a static graph (paper 5.1.4)."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log:
    from dynpr.io.prepare import check_prepared_file
    from dynpr.pipeline.files import random_batch_file

    check_prepared_file(snakemake.input[0], snakemake.wildcards.dataset)  # not another graph's file
    p = snakemake.params
    log(random_batch_file(snakemake.input[0], snakemake.output[0], snakemake.wildcards.dataset, p.fraction,
                          p.insert_share, p.repeats, p.seed))
