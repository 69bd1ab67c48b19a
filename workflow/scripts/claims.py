"""Write results/claims.csv: every claim of the paper and its reports beside this run's measurements."""

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, "claims", snakemake.log[0]) as log:
    import pandas as pd

    from dynpr.atomic_files import write_csv_atomic
    from dynpr.claims import capped_runs, evaluate
    from dynpr.results import read_csv
    from dynpr.snakemake_jobs import read_input

    log.lap("start and imports")
    summary = read_csv(snakemake.input.summary)
    bench = {name: read_input(snakemake.input[name], pd.read_csv)
             for name in ("static_variants", "partition_ablation", "kahn") if name in snakemake.input.keys()}
    log.lap("load and checks")
    claims = evaluate(summary, bench)
    log.lap("work")
    write_csv_atomic(claims, snakemake.output[0])
    log.lap("writing")
    log(f"{len(claims)} claims: " + ", ".join(f"{v} {n}" for v, n in claims["verdict"].value_counts().items())
        + f"; {capped_runs(summary)} capped runs (converged false) left out")
