# Shared helpers: catalog lookups, input functions, wildcard constraints.
# Sections are owned by the rule files that use them; keep each one small.

import re

from dynpr.catalog import load_catalog

CATALOG = load_catalog("datasets/catalog.yaml")


def fraction_label(fraction):
    """Canonical text of a batch fraction in paths and wildcards: 1e-05, 0.001 -> 0.001."""
    return f"{float(fraction):g}"


wildcard_constraints:
    dataset=r"[A-Za-z0-9_.+-]+",
    fraction=r"[0-9.]+(e-?[0-9]+)?",


# --- datasets (datasets.smk) ---


# --- batches (batches.smk) ---


def batch_targets(dataset):
    """Batch files of one dataset: temporal slices for temporal graphs, random batches otherwise."""
    if CATALOG[dataset].kind == "temporal":
        return [f"results/batches/{dataset}/temporal_base.npz"] + [
            f"results/batches/{dataset}/temporal_{fraction_label(f)}.npz"
            for f in config["temporal"]["batch_fractions"]
        ]
    return [
        f"results/batches/{dataset}/random_{fraction_label(f)}.npz"
        for f in config["random"]["batch_fractions"]
    ]


def all_batch_targets():
    """Batch files of every dataset in the config."""
    return [path for dataset in config["datasets"] for path in batch_targets(dataset)]


# --- experiments and figures (experiments.smk, figures.smk) ---
