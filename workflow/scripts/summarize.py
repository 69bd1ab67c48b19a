"""Concatenate every results/runs/{dataset}.csv into results/summary.csv."""

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, "all datasets", snakemake.log[0]) as log:
    from dynpr.results import concat_runs, write_csv

    summary = concat_runs(snakemake.input)
    write_csv(summary, snakemake.output[0])
    log(f"{len(summary)} rows from {len(snakemake.input)} runs files")
