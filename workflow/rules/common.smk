# Shared helpers: catalog lookups, input functions, wildcard constraints.
# Sections are owned by the rule files that use them; keep each one small.

import importlib.util
import os
import re

from snakemake.exceptions import WorkflowError

from dynpr.backend import gpu_available
from dynpr.catalog import UnknownDatasetError, dataset_for_file, get_dataset, load_catalog
from dynpr.jobs import fraction_label

CATALOG = load_catalog("datasets/catalog.yaml")


wildcard_constraints:
    dataset=r"[A-Za-z0-9_.+-]+",
    fraction=r"[0-9.]+(e-?[0-9]+)?",


# --- datasets (datasets.smk) ---

# upstream files that are downloaded (embedded and generated datasets never are)
RAW_FILES = sorted({ds.file_name for ds in CATALOG.values() if ds.url and ds.embedded is None})
RAW_FILE_PATTERN = "|".join(re.escape(name) for name in RAW_FILES)


def catalog_dataset(name):
    """Catalog entry of a dataset, or one clear error listing the known names."""
    try:
        return get_dataset(name, CATALOG)
    except UnknownDatasetError as err:
        raise WorkflowError(f"dynpr: {err}") from None


def raw_dataset(file_name):
    """The catalog entry downloaded as datasets/raw/<file_name>."""
    return dataset_for_file(file_name, CATALOG)


def dataset_source(wildcards):
    """Input of `prepare`: the embedded copy, the raw download, or nothing (generated)."""
    ds = catalog_dataset(wildcards.dataset)
    return [] if ds.source_path is None else str(ds.source_path)


def prepare_mem_mb(wildcards):
    """Memory estimate of `prepare` (parse, sort, CSR + transpose): about 64 bytes per input edge."""
    ds = catalog_dataset(wildcards.dataset)
    edges = ds.temporal_edges or ds.edges or ds.edge_factor << ds.scale
    return 1000 + (64 * edges >> 20)


# --- batches (batches.smk) ---


def batch_targets(dataset):
    """Batch files of one dataset: temporal slices (and base) for temporal graphs, random batches otherwise."""
    kind = run_experiment_kind(dataset)
    base = [f"results/batches/{dataset}/temporal_base.npz"] if kind == "temporal" else []
    return base + [f"results/batches/{dataset}/{kind}_{fraction_label(f)}.npz"
                   for f in config[kind]["batch_fractions"]]


def all_batch_targets():
    """Batch files of every dataset in the config."""
    return [path for dataset in config["datasets"] for path in batch_targets(dataset)]


# --- experiments and figures (experiments.smk, figures.smk) ---

# The runs need a GPU slot only when the configured backend resolves to the GPU.
RUN_GPUS = 1 if config["backend"] == "gpu" or (config["backend"] == "auto" and gpu_available()) else 0

# Runs on the backend the main runs do not use (results/runs/{backend}/) are optional.
OTHER_BACKEND = "cpu" if RUN_GPUS else "gpu"

# Figures depend on the plotting module actually imported, so editing it
# re-renders them; found without importing matplotlib at DAG time.
PLOTS_CODE = importlib.util.find_spec("dynpr.plots").origin

# Figure -> its category in the HTML report (rules plot_summary and plot_bench).
SUMMARY_FIGURES = {
    "temporal_runtime_error": "Temporal graphs",
    "random_runtime": "Random batches",
    "random_error": "Random batches",
    "gpu_vs_cpu": "GPU vs CPU",
    "kahn": "Kahn",
}
BENCH_FIGURES = {"static_comparison": "Benchmarks", "partition_ablation": "Benchmarks"}


def figure_category(wildcards):
    """Report category of figures/{figure}.png."""
    return {**SUMMARY_FIGURES, **BENCH_FIGURES}[wildcards.figure]


def dataset_kind(name):
    """Catalog kind of a configured dataset, or one clear error naming the known ones."""
    return catalog_dataset(name).kind


# Fail at once, in one line, on a configured dataset the catalog lacks (before any
# rule file looks it up).
for _name in config["datasets"]:
    dataset_kind(_name)


def run_experiment_kind(name):
    """'temporal' for temporal graphs, 'random' (random batches) for static and generated ones."""
    return "temporal" if dataset_kind(name) == "temporal" else "random"


def run_fractions(wildcards):
    """Batch fractions of a dataset's experiment, in config order."""
    section = run_experiment_kind(wildcards.dataset)
    return [float(f) for f in config[section]["batch_fractions"]]


def run_inputs(wildcards):
    """Prepared graph, batch files (one per fraction, in config order) and, for temporal graphs, the base graph."""
    d = wildcards.dataset
    files = batch_targets(d)
    inputs = {"graph": f"results/graphs/{d}.npz", "batches": [f for f in files if not f.endswith("_base.npz")]}
    if run_experiment_kind(d) == "temporal":
        inputs["base"] = files[0]
    return inputs


def run_targets():
    """Every configured dataset's runs file."""
    return [f"results/runs/{d}.csv" for d in config["datasets"]]


def other_backend_targets():
    """Runs of every configured dataset on the backend the main runs do not use (rule compare_backends)."""
    return [f"results/runs/{OTHER_BACKEND}/{d}.csv" for d in config["datasets"]]


def other_backend_runs():
    """Those of :func:`other_backend_targets` present now: the summary takes them in when they exist."""
    return [path for path in other_backend_targets() if os.path.exists(path)]


def temporal_datasets():
    """Configured datasets that run the temporal experiment."""
    return [d for d in config["datasets"] if run_experiment_kind(d) == "temporal"]


# The tables of rule bench that the bench figures plot.
BENCH_TABLES = ("results/bench/static_variants.csv", "results/bench/partition_ablation.csv")


def bench_inputs(wildcards=None):
    """Those of :data:`BENCH_TABLES` present when the DAG is built (written by `snakemake bench`);
    none is fine.

    Found by existence, so the default target never needs a GPU: a `figures` run after
    `bench` sees the new tables as changed input and re-renders the two figures. The CPU
    benchmarks' tables in results/bench are not inputs.
    """
    return [path for path in BENCH_TABLES if os.path.exists(path)]


# Figures that need GPU results (benchmarks, the second backend's runs) are targets only once
# those results exist, so a CPU-only setup neither renders placeholders nor reports them;
# the choice reads files and config, never probes CUDA. onstart (Snakefile) names what was skipped.
def _second_backend_runs():
    return [f"results/runs/{b}/{d}.csv" for b in ("cpu", "gpu") for d in config["datasets"]
            if os.path.exists(f"results/runs/{b}/{d}.csv")]


# figure -> (has its data now, the rule that makes the data)
GPU_FIGURES = {
    "static_comparison": (bool(bench_inputs()), "bench"),
    "partition_ablation": (bool(bench_inputs()), "bench"),
    "gpu_vs_cpu": (bool(_second_backend_runs()), "compare_backends"),
}
_SKIPPED = [f"{name} (`snakemake --cores 1 {rule}`)" for name, (present, rule) in GPU_FIGURES.items() if not present]
SKIPPED_FIGURES = (
    f"{', '.join(_SKIPPED)}: no GPU results yet; run those on a GPU machine, then `snakemake --cores 1 figures`"
    if _SKIPPED else ""
)


def default_targets():
    """Every figure whose data exist (PNG and PDF), and the claims table: the default target `figures`."""
    names = [*SUMMARY_FIGURES, *BENCH_FIGURES, *(f"temporal_per_batch_{d}" for d in temporal_datasets())]
    names = [n for n in names if GPU_FIGURES.get(n, (True,))[0]]
    return [f"figures/{name}.{ext}" for name in names for ext in ("png", "pdf")] + ["results/claims.csv"]
