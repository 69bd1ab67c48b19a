"""Run one dataset's experiment (temporal or random) plus Kahn; write results/runs/{dataset}.csv."""

import contextlib

from dynpr.device_claims import claim_device
from dynpr.snakemake_jobs import read_input, script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log, (
    # a GPU job claims its own device before anything initialises CUDA (docs/scaling.md)
    claim_device(report=log) if snakemake.resources.get("gpu", 0) else contextlib.nullcontext()
):
    from dynpr.batches import read_batch_params, read_batches
    from dynpr.experiments import options_from_config, run_batches, run_kahn
    from dynpr.graph import Graph
    from dynpr.prepare import load_prepared
    from dynpr.results import git_commit, to_frame, write_csv
    from dynpr.validate import check_made_for

    p = snakemake.params
    dataset = snakemake.wildcards.dataset
    options, reference_tolerance = options_from_config(p.pagerank)
    graph, _ = read_input(snakemake.input.graph, load_prepared)
    start = read_input(snakemake.input.base, Graph.load) if p.experiment == "temporal" else graph
    batches = {}
    for fraction, path in zip(p.fractions, snakemake.input.batches, strict=True):
        batches[fraction] = read_input(path, read_batches)
        # a batch file made for another graph (a stale or copied file) is refused, not applied
        check_made_for(path, read_batch_params(path), start, snakemake.input.base if p.experiment == "temporal"
                       else snakemake.input.graph)
    commit = git_commit()
    log(f"{dataset}: {p.experiment} experiment, approaches {' '.join(p.approaches)}, backend {p.backend}")
    rows = run_batches(p.experiment, dataset, start, batches, p.approaches, options, backend=p.backend,
                       reference_tolerance=reference_tolerance, repeat=p.repeat, log=log, commit=commit)
    rows += run_kahn(dataset, graph, backend=p.backend, repeat=p.repeat, log=log, commit=commit)
    write_csv(to_frame(rows), snakemake.output[0])
