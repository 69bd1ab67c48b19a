"""Rule bench: GPU benchmark tables (static variants, partition ablation, Kahn) via dynpr.bench.

Without a CUDA device the rule fails with one line ("bench needs a GPU: ...").
"""

from pathlib import Path

from dynpr.device_claims import claim_device
from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, "results/bench", snakemake.log[0]) as log, claim_device(report=log):
    from dynpr import bench

    p = snakemake.params
    argv = ["--out-dir", str(Path(snakemake.output.static).parent), "--graphs", *p.graphs,
            "--repeats", str(p.repeats), "--ablation-graphs", *p.ablation_graphs,
            "--fractions", *map(str, p.fractions), "--batches", str(p.batches),
            "--random-batches", str(p.random_batches)]
    bench.run(bench.build_parser().parse_args(argv), log=log)
