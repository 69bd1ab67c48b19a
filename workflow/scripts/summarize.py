"""Concatenate every results/runs/{dataset}.csv into results/summary.csv, each checked complete."""

import sys

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, "all datasets", snakemake.log[0]) as log:
    from dynpr.evaluation.results import concat_runs, expected_runs, write_csv

    log.lap("start and imports")
    # a runs file cut short or edited is refused here, naming the file and the rerun
    summary = concat_runs(snakemake.input, expected_runs(snakemake.config))
    log.lap("load and checks")
    write_csv(summary, snakemake.output[0])
    log.lap("writing")
    log(f"{len(summary)} rows from {len(snakemake.input)} runs files")
    capped = summary[~summary["converged"]]
    if len(capped):  # the same note on stderr, where Snakemake shows it
        note = (f"dynpr: summary: {len(capped)} runs stopped at max_iterations before meeting the tolerance "
                f"(converged = False): {sorted(set(capped['dataset'] + '/' + capped['approach']))}")
        log(note)
        print(note, file=sys.stderr)
