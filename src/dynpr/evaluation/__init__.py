"""The paper's evaluation: experiment runs, results tables, claims and verdicts, benchmarks, figures."""
