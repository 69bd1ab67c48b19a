"""Render one figure (PNG + PDF) from results/summary.csv."""

from dynpr.pipeline.jobs import script_errors

target = getattr(snakemake.wildcards, "dataset", snakemake.params.figure)
with script_errors(snakemake.rule, target, snakemake.log[0]) as log:
    from dynpr.evaluation import plots
    from dynpr.evaluation.results import expected_runs, read_csv

    log.lap("start and imports")
    summary = read_csv(snakemake.input.summary, expected_runs(snakemake.config))
    log.lap("load and checks")
    extra = {"dataset": snakemake.wildcards.dataset} if "dataset" in snakemake.wildcards.keys() else {}
    fig = plots.SUMMARY_FIGURES[snakemake.params.figure](summary, **extra)
    log.lap("work")
    plots.save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log.lap("writing")
    log(f"{snakemake.output.png}: from {len(summary)} summary rows")
