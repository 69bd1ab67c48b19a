"""Rule bench: GPU benchmark tables (static variants, partition ablation, Kahn) via dynpr.evaluation.bench.

Without a CUDA device the rule fails with one line ("bench needs a GPU: ...").
"""

from dynpr.pipeline.device_claims import claim_device
from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, "results/bench", snakemake.log[0]) as log, claim_device(report=log):
    from dynpr.evaluation import bench

    log.lap("start and imports")
    p = snakemake.params
    graphs = dict(zip(p.bench_graphs, snakemake.input.graphs, strict=True))
    batch_files = [bench.BatchFile(**f) for f in p.batch_files]
    bench.write_tables(graphs, batch_files, p, snakemake.output, log=log)
    log.lap("work")
