"""Render a peers figure (PNG + PDF) from results/peers/*.csv."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.params.figure, snakemake.log[0]) as log:
    from dynpr.evaluation import plots
    from dynpr.evaluation.peer_programs import read_peers

    peers = read_peers(snakemake.input.peers)
    fig = plots.PEER_FIGURES[snakemake.params.figure](peers)
    plots.save_figure(fig, snakemake.output.png, snakemake.output.pdf)
    log(f"{snakemake.output.png}: from {len(peers)} peers rows in {len(snakemake.input.peers)} files")
