# Shared helpers: config checks, catalog lookups, input functions, wildcard constraints.
# Sections are owned by the rule files that use them; keep each one small.

import importlib.util
import os
import re

import yaml
from snakemake.exceptions import WorkflowError

from dynpr.io.catalog import UnknownDatasetError, dataset_for_file, get_dataset, load_catalog
from dynpr.errors import InputError
from dynpr.pipeline.jobs import check_fraction_labels, fraction_label
from dynpr.graph.validate import check_config_values as check_values_against_schema
from dynpr.graph.validate import check_schema

CONFIG_SCHEMA = "../schemas/config.schema.yaml"


def check_config():
    """The config against its schema, one line naming the key (Snakemake's validate prints the whole
    schema), then what the schema cannot say: no NaN or infinity, no 2.0 where an integer belongs."""
    with open(os.path.join(workflow.current_basedir, CONFIG_SCHEMA)) as fh:
        schema = yaml.safe_load(fh)
    given = [*map(str, workflow.configfiles), *(["--config"] if workflow.config_settings.config else [])]
    source = f"config ({', '.join(dict.fromkeys(given))})"
    try:
        check_schema(config, schema, source)
        check_values_against_schema(config, schema, source)
        check_fraction_labels(config, source)
    except InputError as err:
        raise WorkflowError(f"dynpr: {err}") from None


check_config()

# A GPU run's random-batch claims rest on 5 graphs (docs/claims.md): with `backend: gpu` the generated
# graphs of `gpu_datasets` join `datasets`. The DAG still depends on the config alone.
# The CPU side of compare_backends keeps to the datasets as given (the R-MAT graphs take minutes there).
COMPARED_DATASETS = list(config["datasets"])
if config["backend"] == "gpu":
    config["datasets"] = list(dict.fromkeys([*config["datasets"], *config.get("gpu_datasets", [])]))

CATALOG = load_catalog("datasets/catalog.yaml")


wildcard_constraints:
    dataset=r"[A-Za-z0-9_.+-]+",


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


def job_mem_mb(rule, dataset, fraction=0.0, gpu=False):
    """`mem_mb` of one job: its modelled peak host memory (dynpr.pipeline.footprint, from the catalog's counts)."""
    from dynpr.pipeline.footprint import job_bytes, mem_mb  # lazy: keeps NumPy out of module import

    needed = mem_mb(job_bytes(rule, catalog_dataset(dataset), fraction=fraction, gpu=gpu))
    return within_limit(needed, f"{rule} on {dataset}")


def within_limit(needed_mb, what):
    """`needed_mb`, refused in one line where `--resources mem_mb` is lower (Snakemake would shrink it)."""
    from dynpr.pipeline.footprint import check_memory_limit

    limit = workflow.resource_settings.resources.get("mem_mb")
    try:
        check_memory_limit(needed_mb, getattr(limit, "value", limit), what)  # a Resource from the command line
    except InputError as err:
        raise WorkflowError(f"dynpr: {err}") from None
    return needed_mb


def prepare_mem_mb(wildcards):
    return job_mem_mb("prepare", wildcards.dataset, gpu=bool(prepare_gpus_of(wildcards.dataset)))


def batches_mem_mb(rule):
    """`mem_mb` of a batch rule's job: the peak at its largest fraction (one fraction's batches are held
    at a time)."""
    kind = rule.split("_")[0]
    return lambda wildcards: job_mem_mb(rule, wildcards.dataset, max(batch_fractions(kind)))


def prepare_gpus_of(dataset):
    """`prepare` takes a GPU slot where it may generate on one: R-MAT graphs of the counter-based
    stream (dynpr.generate.rmat.generation_backend), unless `backend: cpu`."""
    ds = catalog_dataset(dataset)
    if ds.kind != "generated" or config["backend"] == "cpu":
        return 0
    from dynpr.generate.rmat import counter_stream  # lazy: imports NumPy and SciPy

    return int(counter_stream(ds.scale, ds.edge_factor))


def prepare_gpus(wildcards):
    return prepare_gpus_of(wildcards.dataset)


# --- peers (peers.smk) ---

# A `peers` section puts rule peers (dynpr's Static beside the library and program peers,
# results/peers/{dataset}.csv), the peers_static figure and the measured 5.2-gunrock/hornet claims in the DAG.
PEERS = config.get("peers")
PEERS_CONFIGURED = PEERS is not None
PEER_FIGURES = {"peers_static": "Peers"}


def peer_graph_names():
    """Graphs the peers run on: ``peers.graphs``, else the datasets (none without a peers section)."""
    return list(PEERS.get("graphs") or config["datasets"]) if PEERS_CONFIGURED else []


def peer_targets():
    """Every peers table the config asks for."""
    return [f"results/peers/{d}.csv" for d in peer_graph_names()]


def claims_peer_inputs(wildcards=None):
    """The peers tables the claims read (5.2-gunrock, 5.2-hornet), by name; none without a peers section."""
    return {"peers": peer_targets()} if PEERS_CONFIGURED else {}


def peers_mem_mb(wildcards):
    """`mem_mb` of a peers job: as a run job's at its smallest batch (the graph, its reference and ranks)."""
    return job_mem_mb("run_experiment", wildcards.dataset, gpu=RUN_GPUS > 0)


# --- batches (batches.smk) ---


def batch_fractions(kind):
    """Fractions the `kind` (temporal or random) batch job of a dataset writes: the experiment's, in
    config order, then those only the bench's ablation reads."""
    fractions = [float(f) for f in config[kind]["batch_fractions"]]
    return fractions + [float(f) for f in config["bench"]["fractions"] if float(f) not in fractions]


def batch_outputs(kind):
    """Output patterns of a batch job, one per :func:`batch_fractions` (the dataset a wildcard)."""
    return [f"results/batches/{{dataset}}/{kind}_{fraction_label(f)}.npz" for f in batch_fractions(kind)]


def batch_targets(dataset):
    """Batch files of one dataset: temporal slices (and base) for temporal graphs, random batches otherwise."""
    kind = run_experiment_kind(dataset)
    base = [f"results/batches/{dataset}/temporal_base.npz"] if kind == "temporal" else []
    return base + [f"results/batches/{dataset}/{kind}_{fraction_label(f)}.npz" for f in config[kind]["batch_fractions"]]


def all_batch_targets():
    """Batch files of every dataset in the config."""
    return [path for dataset in config["datasets"] for path in batch_targets(dataset)]


# --- experiments and figures (experiments.smk, figures.smk) ---

# What the machine must offer follows from the config alone, so the DAG is the same on
# every machine (nothing here probes CUDA or looks for files):
# - backend "gpu" declares a GPU machine: GPU-only work (rule bench, whose tables the
#   static_comparison, partition_ablation and kahn_bench figures plot) is part of the DAG;
# - backend "auto" runs on a GPU when a job finds one (it claims a device at run time) and on
#   the CPU otherwise; "cpu" never touches one. Neither puts GPU-only work in the DAG.
GPU_CONFIG = config["backend"] == "gpu"
# Run jobs that may use a GPU take a slot of the `gpu` resource (`--resources gpu=K`).
RUN_GPUS = 0 if config["backend"] == "cpu" else 1
# compare_backends: true adds the runs on the other backend (results/runs/{backend}/) to the
# summary (the GPU vs CPU figure); "auto" counts as the GPU side.
COMPARE_BACKENDS = bool(config.get("compare_backends", False))
OTHER_BACKEND = "gpu" if config["backend"] == "cpu" else "cpu"
# What in the config needs a GPU machine. The Snakefile's onstart refuses it on a machine without
# one, after the DAG is built and before any job runs; a dry run skips onstart, so it still plans.
GPU_WORK = ", ".join(
    option for option, wanted in (("backend: gpu", GPU_CONFIG), ("compare_backends: true", COMPARE_BACKENDS)) if wanted
)


def backend_env(backend):
    """Conda environment of jobs on ``backend``: CuPy and a CUDA runtime only where a GPU may be used,
    so that ``backend: cpu`` builds on a machine without CUDA (macOS)."""
    return "../envs/dynpr.yaml" if backend == "cpu" else "../envs/dynpr-gpu.yaml"


# Figures depend on the plotting module actually imported, so editing it
# re-renders them; found without importing matplotlib at DAG time.
# The figures' code and their look: editing either re-renders every figure (no run is recomputed).
PLOTS_CODE = [importlib.util.find_spec(m).origin for m in ("dynpr.evaluation.plots", "dynpr.evaluation.figure_style")]

# Figure -> its category in the HTML report (rules plot_summary and plot_bench).
SUMMARY_FIGURES = {
    "temporal_runtime_error": "Temporal graphs",
    "random_runtime": "Random batches",
    "random_error": "Random batches",
    "gpu_vs_cpu": "GPU vs CPU",
    "kahn": "Kahn",
}
BENCH_FIGURES = {"static_comparison": "Benchmarks", "partition_ablation": "Benchmarks", "kahn_bench": "Benchmarks"}


def figure_category(wildcards):
    """Report category of figures/{figure}.png."""
    return {**SUMMARY_FIGURES, **BENCH_FIGURES, **PEER_FIGURES}[wildcards.figure]


def dataset_kind(name):
    """Catalog kind of a configured dataset, or one clear error naming the known ones."""
    return catalog_dataset(name).kind


# Fail at once, in one line, on a configured dataset the catalog lacks (before any
# rule file looks it up).
for _name in config["datasets"] + peer_graph_names():
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


def run_gpus(wildcards):
    """GPU slots of a run job: `run_experiment` per the config's backend, `run_experiment_on_backend`
    per its backend wildcard."""
    backend = wildcards.get("backend")
    return RUN_GPUS if backend is None else int(backend == "gpu")


def run_mem_mb(wildcards):
    """`mem_mb` of a run job: the model's peak at the dataset's largest batch fraction."""
    return job_mem_mb("run_experiment", wildcards.dataset, max(run_fractions(wildcards)), gpu=run_gpus(wildcards) > 0)


def run_gpu_mem_mb(wildcards):
    """`gpu_mem_mb` of a GPU `run_experiment`: its device memory plan at the largest batch
    (dynpr.gpu.memory.experiment_device_bytes; relabelling as on a 50 MB L2), 0 on the CPU."""
    if not run_gpus(wildcards):
        return 0
    from dynpr.pipeline.footprint import dataset_counts, mem_mb
    from dynpr.gpu.memory import experiment_device_bytes
    from dynpr.designs import relabels
    from dynpr.evaluation.experiments import options_from_config

    c = dataset_counts(catalog_dataset(wildcards.dataset), gpu=True)
    edges = c.temporal_edges or c.edges - c.vertices
    plan = experiment_device_bytes(
        c.vertices,
        c.edges,
        int(max(run_fractions(wildcards)) * edges) + 1,
        config["approaches"],
        options_from_config(config["pagerank"])[0],
        repeat=config["repeat"],
        temporal=bool(c.temporal_edges),
        relabel=relabels(c.vertices, 50 << 20),
    )
    return mem_mb(plan["peak"])


def slow_cpu_runs(hours=1.0):
    """`name (N h)` of each configured dataset whose experiment on the CPU engine takes more than
    `hours` by dynpr.pipeline.footprint.cpu_experiment_seconds (a floor), when runs may take the CPU."""
    if config["backend"] == "gpu":
        return []
    from dynpr.pipeline.footprint import cpu_experiment_seconds, dataset_counts

    slow = []
    for name in config["datasets"]:
        c = dataset_counts(catalog_dataset(name))
        fractions = config[run_experiment_kind(name)]["batch_fractions"]
        seconds = cpu_experiment_seconds(c.edges, len(fractions), len(config["approaches"]), config["repeat"])
        if seconds > 3600 * hours:
            slow.append(f"{name} ({seconds / 3600:.0f} h)")
    return slow


def run_targets():
    """Every configured dataset's runs file."""
    return [f"results/runs/{d}.csv" for d in config["datasets"]]


def other_backend_targets():
    """Runs on the backend the main runs do not use (rule compare_backends) of the datasets as
    configured, without the generated graphs that `gpu_datasets` adds."""
    return [f"results/runs/{OTHER_BACKEND}/{d}.csv" for d in COMPARED_DATASETS]


def summary_inputs():
    """Runs files the summary concatenates: every configured dataset's, and with
    ``compare_backends`` those on the other backend too."""
    return run_targets() + (other_backend_targets() if COMPARE_BACKENDS else [])


def temporal_datasets():
    """Configured datasets that run the temporal experiment."""
    return [d for d in config["datasets"] if run_experiment_kind(d) == "temporal"]


# --- GPU benchmarks (bench.smk) ---


def bench_graph_names():
    """Graphs the bench rule reads (the static comparison's and the ablation's, each once)."""
    return list(dict.fromkeys(config["bench"]["graphs"] + config["bench"]["ablation_graphs"]))


def bench_batch_files():
    """The ablation's batch files, as dynpr.evaluation.bench.BatchFile fields: per ablation graph and bench
    fraction the pipeline's temporal slices (with their base) or random batches."""
    files = []
    for d in config["bench"]["ablation_graphs"]:
        kind = run_experiment_kind(d)
        for f in config["bench"]["fractions"]:
            files.append(
                {
                    "graph": d,
                    "fraction": float(f),
                    "batches": f"results/batches/{d}/{kind}_{fraction_label(f)}.npz",
                    "base": f"results/batches/{d}/temporal_base.npz" if kind == "temporal" else None,
                }
            )
    return files


def bench_rule_inputs(wildcards):
    """Inputs of the bench rule, the prepared graphs (in :func:`bench_graph_names` order, which
    params.bench_graphs repeats) and every batch file of the ablation."""
    batches = [path for f in bench_batch_files() for path in (f["batches"], f["base"]) if path]
    return {"graphs": [f"results/graphs/{d}.npz" for d in bench_graph_names()], "batches": list(dict.fromkeys(batches))}


def bench_mem_mb(wildcards):
    """`mem_mb` of the bench job, from its largest graph or Kahn report matrix (dynpr.pipeline.footprint.bench_bytes)."""
    from dynpr.pipeline.footprint import bench_bytes, dataset_counts, mem_mb

    counts = [dataset_counts(catalog_dataset(d), gpu=True) for d in bench_graph_names()]
    bench = config["bench"]
    needed = mem_mb(bench_bytes(counts, bench.get("kahn_report_sizes", ()), bench.get("kahn_report_density", 0.5)))
    return within_limit(needed, "bench")


# The tables of rule bench that the bench figures plot.
BENCH_TABLES = ("results/bench/static_variants.csv", "results/bench/partition_ablation.csv", "results/bench/kahn.csv")


def claims_bench_inputs(wildcards=None):
    """The benchmark tables the reports' claims read (rule bench's, with a GPU config), by name."""
    return (
        {"static_variants": BENCH_TABLES[0], "partition_ablation": BENCH_TABLES[1], "kahn": "results/bench/kahn.csv"}
        if GPU_CONFIG
        else {}
    )


def bench_inputs(wildcards=None):
    """Tables the bench figures plot, the bench rule's with a GPU config (:data:`GPU_CONFIG`), else
    none (the figures then say there is no benchmark data). The CPU benchmarks' tables in
    results/bench are never inputs."""
    return list(BENCH_TABLES) if GPU_CONFIG else []


# Figures that need GPU results are targets only when the config asks for those results
# (GPU_CONFIG for the benchmarks, COMPARE_BACKENDS for the second backend's runs), so a
# CPU-only setup neither renders placeholders nor reports them; onstart (Snakefile) names
# what was skipped and the option that brings it in.
GPU_FIGURES = {  # figure -> (in the DAG, the option that puts it there)
    "static_comparison": (GPU_CONFIG, "--config backend=gpu"),
    "partition_ablation": (GPU_CONFIG, "--config backend=gpu"),
    "kahn_bench": (GPU_CONFIG, "--config backend=gpu"),
    "gpu_vs_cpu": (COMPARE_BACKENDS, "--config compare_backends=True"),
}
_SKIPPED = [
    f"{name} (`snakemake --cores 1 figures {option}`)" for name, (wanted, option) in GPU_FIGURES.items() if not wanted
]
SKIPPED_FIGURES = f"{', '.join(_SKIPPED)}: they need a GPU machine" if _SKIPPED else ""


def default_targets():
    """Every figure the config asks for (PNG and PDF), and the claims table: the default target `figures`."""
    names = [*SUMMARY_FIGURES, *BENCH_FIGURES, *(f"temporal_per_batch_{d}" for d in temporal_datasets())]
    names = [n for n in names if GPU_FIGURES.get(n, (True,))[0]]
    names += list(PEER_FIGURES) if PEERS_CONFIGURED else []
    return [f"figures/{name}.{ext}" for name in names for ext in ("png", "pdf")] + ["results/claims.csv"]
