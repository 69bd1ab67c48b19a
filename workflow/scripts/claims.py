"""Write results/claims.csv: the paper's headline claims beside this run's measurements."""

from dynpr.snakemake_jobs import script_errors

with script_errors(snakemake.rule, "claims", snakemake.log[0]) as log:
    from dynpr.atomic_files import write_csv_atomic
    from dynpr.claims import evaluate
    from dynpr.results import read_csv

    claims = evaluate(read_csv(snakemake.input.summary))
    write_csv_atomic(claims, snakemake.output[0])
    log(f"{len(claims)} claims: " + ", ".join(f"{v} {n}" for v, n in claims["verdict"].value_counts().items()))
