"""Write results/claims.csv: every claim of the paper and its reports beside this run's measurements."""

from dynpr.pipeline.jobs import script_errors

with script_errors(snakemake.rule, "claims", snakemake.log[0]) as log:
    import pandas as pd

    from dynpr.graph.atomic_files import write_csv_atomic
    from dynpr.evaluation.claims import capped_runs, evaluate
    from dynpr.evaluation.results import expected_runs, read_summary
    from dynpr.pipeline.jobs import read_input

    log.lap("start and imports")
    # complete for the config (no dataset it does not list, no row twice) and equal to the runs files it
    # was built from, as the figures read it: a claim never rests on an edited summary
    summary = read_summary(snakemake.input.summary, snakemake.input.runs, expected_runs(snakemake.config))
    bench = {name: read_input(snakemake.input[name], pd.read_csv)
             for name in ("static_variants", "partition_ablation", "kahn") if name in snakemake.input.keys()}
    log.lap("load and checks")
    claims = evaluate(summary, bench)
    if "peers" in snakemake.input.keys():  # 5.2-gunrock and 5.2-hornet, measured where their peer ran
        from dynpr.evaluation.peer_claims import with_peer_claims
        from dynpr.evaluation.peer_programs import read_peers

        claims = with_peer_claims(claims, read_input(snakemake.input.peers, read_peers))
    log.lap("work")
    write_csv_atomic(claims, snakemake.output[0])
    log.lap("writing")
    log(f"{len(claims)} claims: " + ", ".join(f"{v} {n}" for v, n in claims["verdict"].value_counts().items())
        + f"; {capped_runs(summary)} capped runs (converged false) left out")
