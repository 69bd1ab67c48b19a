"""Render one benchmark figure (PNG + PDF) from results/bench/*.csv, or a note when there are none."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.params.figure, snakemake.log[0]) as log:
    from dynpr.evaluation import plots

    bench = plots.read_bench(snakemake.input.bench)
    fig = plots.BENCH_FIGURES[snakemake.params.figure](bench)
    plots.save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log(f"{snakemake.output.png}: from {len(bench)} benchmark rows in {len(snakemake.input.bench)} files")
