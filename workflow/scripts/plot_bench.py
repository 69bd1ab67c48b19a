"""Render one benchmark figure (PNG + PDF) from results/bench/*.csv, or a note when there are none."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.params.figure, snakemake.log[0]) as log:
    from dynpr.evaluation import plots

    log.lap("start and imports")
    bench = plots.read_bench(snakemake.input.bench)
    log.lap("load and checks")
    fig = plots.BENCH_FIGURES[snakemake.params.figure](bench)
    log.lap("work")
    plots.save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log.lap("writing")
    log(f"{snakemake.output.png}: from {len(bench)} benchmark rows in {len(snakemake.input.bench)} files")
