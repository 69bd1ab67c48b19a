"""Concatenate every results/runs/{dataset}.csv into results/summary.csv."""

import sys

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, "all datasets", snakemake.log[0]) as log:
    from dynpr.results import concat_runs, write_csv

    summary = concat_runs(snakemake.input)
    write_csv(summary, snakemake.output[0])
    log(f"{len(summary)} rows from {len(snakemake.input)} runs files")
    capped = summary[~summary["converged"]]
    if len(capped):  # the same note on stderr, where Snakemake shows it
        note = (f"dynpr: summary: {len(capped)} runs stopped at max_iterations before meeting the tolerance "
                f"(converged = False): {sorted(set(capped['dataset'] + '/' + capped['approach']))}")
        log(note)
        print(note, file=sys.stderr)
