"""Rule peers: dynpr's Static beside the library and program peers on one prepared graph (dynpr.evaluation.peers).

A configured program that is missing, not executable, crashes or prints nothing parseable fails the job
in one line naming the peer and the graph; no table is written then.
"""

import contextlib

from dynpr.pipeline.device_claims import claim_device
from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, snakemake.wildcards.dataset, snakemake.log[0]) as log, (
    # a GPU job claims its own device before anything initialises CUDA; the programs inherit it
    claim_device(report=log) if snakemake.resources.get("gpu", 0) else contextlib.nullcontext()
):
    from pathlib import Path

    from dynpr.evaluation.experiments import options_from_config
    from dynpr.evaluation.peers import measure_peers
    from dynpr.graph.atomic_files import write_csv_atomic

    p = snakemake.params
    options, reference_tolerance = options_from_config(p.pagerank)
    table = measure_peers(snakemake.wildcards.dataset, snakemake.input.graph, p.peers, options, backend=p.backend,
                          repeat=p.repeat, reference_tolerance=reference_tolerance,
                          scratch=Path(snakemake.output[0]).parent, log=log)
    write_csv_atomic(table, snakemake.output[0])
    log(f"{snakemake.output[0]}: {len(table)} rows ({', '.join(dict.fromkeys(table['peer']))})")
