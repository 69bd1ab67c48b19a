"""Run one dataset's experiment (temporal or random) plus Kahn; write results/runs/{dataset}.csv."""

import contextlib

from dynpr.pipeline.device_claims import claim_device
from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log, (
    # a GPU job claims its own device before anything initialises CUDA (docs/scaling.md)
    claim_device(report=log) if snakemake.resources.get("gpu", 0) else contextlib.nullcontext()
):
    from dynpr.evaluation.experiments import options_from_config, run_dataset
    from dynpr.io.prepare import check_prepared_file
    from dynpr.graph.npz_files import check_mapped_files_unchanged
    from dynpr.evaluation.results import to_frame, write_csv

    log.lap("start and imports")
    check_prepared_file(snakemake.input.graph, snakemake.wildcards.dataset)  # not another graph's file
    p = snakemake.params
    options, reference_tolerance = options_from_config(p.pagerank)
    log(f"{snakemake.wildcards.dataset}: {p.experiment} experiment, approaches {' '.join(p.approaches)}, "
        f"backend {p.backend}")
    rows = run_dataset(p.experiment, snakemake.wildcards.dataset, snakemake.input.graph,
                       dict(zip(p.fractions, snakemake.input.batches, strict=True)), p.approaches, options,
                       base_path=getattr(snakemake.input, "base", None), backend=p.backend,
                       reference_tolerance=reference_tolerance, repeat=p.repeat, log=log, lap=log.lap)
    log.lap("work")
    check_mapped_files_unchanged()  # no runs file from a graph or batch file rewritten in place meanwhile
    write_csv(to_frame(rows), snakemake.output[0])
    log.lap("writing")
