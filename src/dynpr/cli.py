"""The ``dynpr`` command line: PageRank approaches and Kahn cycle detection on one graph.

``dynpr pagerank GRAPH [--batch FILE] [--approach ...] ...`` prints one JSON object
per run; ``dynpr batch GRAPH --fraction F --out FILE`` writes random batches for it;
``dynpr kahn GRAPH`` prints one. Expected errors print one ``dynpr: error: ...``
line on stderr naming the file, flag or key, and exit 2 for bad input, 1 for a
problem of the environment (no GPU, network, disk; see :mod:`dynpr.errors`).
SIGTERM removes temporary files before exiting.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import logging
import math
import re
import sys
import time
from pathlib import Path

from dynpr import APPROACHES
from dynpr.graph.atomic_files import check_output
from dynpr.backend import BACKENDS
from dynpr.errors import EXIT_INPUT, EXIT_RESOURCE, BatchError, DynprError, InputError, NoGpuError

_log = logging.getLogger("dynpr.cli")
SELF_LOOPS_HELP = ("the paper's convention: a self-loop is added on every vertex (no dead ends), which shifts ranks "
                   "from NetworkX's default (L1 0.63 on CollegeMsg); --no-self-loops uses NetworkX's convention instead")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump), exit status 2.

    Values such as ``-1e-6`` are read as (negative) numbers, not as flags:
    argparse's own pattern knows only ``-1`` and ``-.5``, so ``--prune-tolerance -1e-6``
    failed with "expected one argument" instead of saying the value is negative.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf$|^-nan$", re.I)

    def error(self, message):
        self.exit(EXIT_INPUT, f"dynpr: error: {message}\n")


def _approaches(value: str) -> list[str]:
    codes = [c.strip() for c in value.split(",") if c.strip()]
    bad = [c for c in codes if c not in APPROACHES]
    if bad or not codes:
        raise argparse.ArgumentTypeError(f"unknown approach {', '.join(bad) or repr(value)}; choose from {', '.join(APPROACHES)}")
    return codes


def _integer(low: int, high: int | None = None):
    """An argparse type: an integer of at least ``low`` (and at most ``high``)."""
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
        if number < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and number > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}, got {value}")
        return number
    return parse


_positive_int = _integer(1)
# a mistyped count would otherwise run for days before anything is written
MAX_REPEAT = 1000
MAX_BATCH_COUNT = 10_000
_non_negative_int = _integer(0)


def _number(low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False):
    """An argparse type: a finite float in the interval (``inf`` and ``nan`` refused)."""
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
        inside = (number > low if low_open else number >= low) and (number < high if high_open else number <= high)
        if not (math.isfinite(number) and inside):
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open or high == math.inf else ']'}"
            raise argparse.ArgumentTypeError(f"must be a finite number in {interval}, got {value}")
        return number
    return parse


_TOLERANCE = _number(0)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # in main: Ctrl-C while it loads is one line

    try:
        return version("dynpr")
    except PackageNotFoundError:  # a source tree on PYTHONPATH, not installed
        return "unknown (not installed)"


def _delimiter(value: str) -> str | None:
    from dynpr.io.edge_lists import EdgeListOptions, delimiter_option

    delimiter = delimiter_option(value)
    try:
        EdgeListOptions(delimiter=delimiter)
    except InputError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return delimiter


def _add_edge_list_flags(command: argparse.ArgumentParser) -> None:
    """How a text edge list GRAPH is read; what is not given is found from its first lines."""
    group = command.add_argument_group("text edge lists", "how a GRAPH file of edges is read (each found from "
                                       "its first lines unless given); not for prepared graphs or catalog names")
    group.add_argument("--delimiter", type=_delimiter, metavar="CHAR",
                       help="between fields: a character, or comma, tab, whitespace (default: a comma or tab when "
                            "every line has one, else whitespace)")
    group.add_argument("--header", action=argparse.BooleanOptionalAction,
                       help="the first line names the columns (default: recognised by its names or by fields that "
                            "are not numbers above numbers)")
    group.add_argument("--labels", action=argparse.BooleanOptionalAction,
                       help="ids are string labels, mapped to dense ids and back in every output (default: when "
                            "an id in the first lines is not a non-negative integer)")
    group.add_argument("--undirected", action="store_true", help="each edge stands for both directions")
    group.add_argument("--temporal", action="store_true",
                       help="the third column holds integer times (default: a weight, ignored: PageRank here is "
                            "unweighted)")


def _backend(name: str) -> str:
    """:func:`dynpr.backend.resolve_backend`, its refusal worded for the command line (a flag, not an argument)."""
    from dynpr.backend import resolve_backend

    try:
        return resolve_backend(name)
    except NoGpuError as err:
        raise NoGpuError(f"{err}; on the command line: --backend cpu or auto") from None


def _edge_list(args):
    from dynpr.io.edge_lists import EdgeListOptions

    return EdgeListOptions(delimiter=args.delimiter, header=args.header, labels=args.labels,
                           undirected=args.undirected, temporal=args.temporal)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dynpr`` (subcommands ``pagerank``, ``batch`` and ``kahn``).

    Returns
    -------
    argparse.ArgumentParser
    """
    # The PageRank option defaults are PageRankOptions' own (one definition).
    from dynpr.designs import REFERENCE_TOLERANCE
    from dynpr.pagerank.options import PageRankOptions

    defaults = PageRankOptions()
    parser = _Parser(prog="dynpr", description="PageRank on dynamic graphs (Static, ND, DT, DF, DF-P) and Kahn cycle detection.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    pr = sub.add_parser("pagerank", help="run PageRank approaches on a graph and, optionally, a batch file",
                        description="Run PageRank approaches; one JSON object per run on stdout. Ranks follow "
                                    + SELF_LOOPS_HELP + ". In the JSON, edges counts the graph's edges without "
                                    "self-loops and self_loops the self-loops of the graph run on, as in kahn.")
    pr.add_argument("graph", help="catalog name or graph file (edge list .txt, .csv, .tsv, gzipped too; .mtx, "
                                  ".mtx.gz, .tar.gz, prepared .npz)")
    _add_edge_list_flags(pr)
    pr.add_argument("--batch", help="batch file (.npz): random batches (dynpr batch, results/batches/*/random_*) "
                                     "each update GRAPH; others, e.g. temporal slices on their base graph, "
                                     "are applied one after another")
    pr.add_argument("--approach", action="append", type=_approaches, metavar="CODE[,CODE...]",
                    help=f"approaches ({', '.join(APPROACHES)}); repeatable; default: all with --batch, static without")
    pr.add_argument("--backend", choices=BACKENDS, default="auto", help="where to run (default: auto)")
    pr.add_argument("--repeat", type=_integer(1, MAX_REPEAT), default=1,
                    help=f"runs of each approach on each batch (at most {MAX_REPEAT:,})")
    pr.add_argument("--reference", action="store_true", help=f"add l1_error against Static at tolerance {REFERENCE_TOLERANCE:g}")
    pr.add_argument("--ranks-out", metavar="FILE",
                    help="write a ranks table: vertex (original id), rank, approach (and batch_index with --batch), "
                         "highest rank first; CSV (.csv, .csv.gz) or Parquet (.parquet, needs pyarrow)")
    pr.add_argument("--top", type=_positive_int, metavar="K", help="with --ranks-out: only the K highest ranks of each run")
    pr.add_argument("--no-self-loops", dest="self_loops", action="store_false",
                    help="NetworkX's convention: no self-loop added, dangling vertices' rank spread over all "
                         "vertices; Static without --batch, on the CPU engine (auto picks it)")
    pr.add_argument("--alpha", type=_number(0, 1, low_open=True, high_open=True), default=defaults.alpha,
                    help="damping factor (default %(default)s)")
    pr.add_argument("--tolerance", type=_TOLERANCE, default=defaults.tolerance,
                    help="L-inf iteration tolerance (default %(default)g)")
    pr.add_argument("--frontier-tolerance", type=_TOLERANCE, default=defaults.frontier_tolerance,
                    help="DF/DF-P expansion tolerance (default %(default)g)")
    pr.add_argument("--prune-tolerance", type=_TOLERANCE, default=defaults.prune_tolerance,
                    help="DF-P pruning tolerance (default %(default)g)")
    pr.add_argument("--max-iterations", type=_positive_int, default=defaults.max_iterations,
                    help="iteration cap (default %(default)s)")
    pr.add_argument("--personalize", metavar="FILE",
                    help="personalized PageRank: a two-column file of original vertex id and weight per line "
                         "(whitespace or comma, # comments); the weights are normalised to sum 1 and the "
                         "vertices it leaves out get none (networkx's personalization)")
    pr.add_argument("--fail-unconverged", action="store_true",
                    help="exit 1 when a run stops at --max-iterations before meeting --tolerance "
                         "(default: report \"converged\": false and go on)")

    batch = sub.add_parser("batch", help="write random 80/20 batch updates for a graph (input for pagerank --batch)",
                           description="Write COUNT random batches for GRAPH to a batch file (.npz), each an "
                                       "independent update of GRAPH: FRACTION x |E| edges, INSERT_SHARE of them "
                                       "insertions of absent vertex pairs, the rest deletions of existing edges "
                                       "(the paper's static-graph experiment). The file records the graph it was "
                                       "made for; pagerank --batch refuses it on another.")
    batch.add_argument("graph", help="catalog name or graph file")
    _add_edge_list_flags(batch)
    batch.add_argument("--fraction", type=_number(0, 1, low_open=True), required=True,
                       help="batch size as a fraction of |E|, e.g. 1e-4")
    batch.add_argument("--count", type=_integer(1, MAX_BATCH_COUNT), default=1,
                       help=f"batches, each an independent update of GRAPH (default 1, at most {MAX_BATCH_COUNT:,})")
    batch.add_argument("--insert-share", type=_number(0, 1), default=0.8, help="share of insertions (default 0.8)")
    batch.add_argument("--seed", type=_non_negative_int, default=42, help="random seed (default 42)")
    batch.add_argument("--out", required=True, metavar="FILE.npz", help="batch file to write")

    kahn = sub.add_parser("kahn", help="detect cycles with level-synchronous Kahn's algorithm",
                          description="Detect cycles with level-synchronous Kahn's algorithm; one JSON object on "
                                      "stdout: is_dag, the vertices processed, the levels and the vertices left "
                                      "on or behind a cycle. The self-loop added on every vertex is removed first "
                                      "unless --keep-self-loops.")
    kahn.add_argument("graph", help="catalog name or graph file")
    _add_edge_list_flags(kahn)
    kahn.add_argument("--backend", choices=BACKENDS, default="auto", help="where to run (default: auto)")
    kahn.add_argument("--keep-self-loops", action="store_true",
                      help="keep the self-loop added on every vertex (each then counts as a cycle)")
    return parser


def _edge_counts(graph) -> dict:
    """``edges`` without self-loops and ``self_loops`` of the graph run on: the same in every subcommand."""
    loops = graph.num_self_loops
    return {"edges": graph.num_edges - loops, "self_loops": loops}


def _progress(total: int, what: str):
    """A progress bar on stderr when it is a terminal (JSON lines stay alone on stdout)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=what, unit="run", disable=None, file=sys.stderr, leave=False)


def _emit(record: dict) -> None:
    from dynpr.graph.npz_files import check_mapped_files_unchanged

    check_mapped_files_unchanged()  # nothing computed on a graph rewritten under its map is reported
    print(json.dumps(record), flush=True)


def _inputs(graph: str, *files: str | None) -> list[Path]:
    """The files a run reads: GRAPH (for a catalog name, its prepared graph and source) and ``files``."""
    from dynpr.io.catalog import get_dataset
    from dynpr.io.prepare import GRAPH_SUFFIXES

    path = Path(graph)
    paths = [path, *(Path(f) for f in files if f)]
    if path.is_file() or path.suffix in GRAPH_SUFFIXES or len(path.parts) > 1:
        return paths
    try:
        dataset = get_dataset(graph)
    except (KeyError, ValueError):
        return paths  # not a catalog name either: reading GRAPH says so
    return [*paths, Path("results/graphs") / f"{dataset.name}.npz", dataset.source_path]


def _check_cpu_run_fits(graph: str) -> None:
    """Before a Matrix Market file is read, from its header: what a CPU run holds, the graph and the
    engine (112 bytes per vertex, where reading and building it peak at 88), so that a graph that
    could be read but not run on stops before minutes of reading."""
    from dynpr.graph.hostmem import CPU_ENGINE_BYTES_PER_EDGE, CPU_ENGINE_BYTES_PER_VERTEX, check_host_fits
    from dynpr.io.prepare import matrix_market_size
    from dynpr.pipeline.footprint import graph_bytes

    size = matrix_market_size(graph)
    if size is not None:
        vertices, edges = size
        check_host_fits(graph_bytes(vertices, edges, vertex_ids=False) + CPU_ENGINE_BYTES_PER_EDGE * edges
                        + CPU_ENGINE_BYTES_PER_VERTEX * vertices,
                        f"{graph}: PageRank on the CPU of {vertices:,} vertices and up to {edges:,} edges")


def _run_pagerank(args) -> None:
    from dynpr import pagerank
    from dynpr.io import ranks
    from dynpr.graph.npz_files import check_mapped_files_unchanged
    from dynpr.pagerank.options import PageRankOptions
    from dynpr.io.prepare import read_graph_with_ids

    approaches = [c for group in args.approach for c in group] if args.approach else (
        list(APPROACHES) if args.batch else ["static"])
    approaches = list(dict.fromkeys(approaches))
    if not args.batch and approaches != ["static"]:
        raise InputError(f"--approach {', '.join(a for a in approaches if a != 'static')} needs --batch")
    if args.top and not args.ranks_out:
        raise InputError("--top needs --ranks-out")
    if args.ranks_out:
        ranks.check_table_path(args.ranks_out)
        check_output(args.ranks_out, "--ranks-out", _inputs(args.graph, args.batch, args.personalize))
    if args.personalize and not Path(args.personalize).is_file():
        raise InputError(f"--personalize {args.personalize}: no such file")
    backend_name = args.backend
    if not args.self_loops:
        if args.batch:
            raise InputError("--no-self-loops runs Static on GRAPH only, without --batch (applying a batch adds "
                             "the paper's self-loops, and DT/DF/DF-P assume them)")
        if backend_name == "gpu":
            raise InputError("--no-self-loops runs on the CPU engine only (the GPU kernels assume a self-loop "
                             "on every vertex); use --backend cpu or auto")
        backend_name = "cpu"
    options = PageRankOptions(alpha=args.alpha, tolerance=args.tolerance, frontier_tolerance=args.frontier_tolerance,
                              prune_tolerance=args.prune_tolerance, max_iterations=args.max_iterations,
                              raise_on_max_iterations=args.fail_unconverged)
    backend = _backend(backend_name)
    if backend == "cpu":
        _check_cpu_run_fits(args.graph)
    started = time.perf_counter()
    _log.info("reading %s", args.graph)
    graph, _, vertex_ids = read_graph_with_ids(args.graph, self_loops=args.self_loops, edge_list=_edge_list(args))
    _log.info("read %s: %d vertices, %d edges and %d self-loops in %.1f s", args.graph, graph.num_vertices,
              *_edge_counts(graph).values(), time.perf_counter() - started)
    if args.personalize:
        from dataclasses import replace

        from dynpr.pagerank.personalization import read_personalization

        weights = read_personalization(args.personalize, vertex_ids, graph.num_vertices)
        options = replace(options, personalization=weights)
    tables = []

    def run(approach, old, current, batch, index, start, ref, counts, bar):
        for repeat in range(args.repeat):
            result = pagerank.update(approach, old, current, batch, start, options, backend=backend)
            record = {
                "graph": args.graph, "approach": approach, "backend": result.backend, "device": result.device,
                "vertices": current.num_vertices, **counts, "self_loops_added": args.self_loops,
                "batch_index": index,
                "deletions": batch.deletions if batch is not None else 0,
                "insertions": batch.insertions if batch is not None else 0,
                "repeat": repeat, "iterations": result.iterations, "converged": result.converged,
                "time_ms": result.time_ms,
                "phases": result.phases, "affected": result.affected, "variant": result.variant,
            }
            if ref is not None:
                record["l1_error"] = pagerank.l1_error(result.ranks, ref)
            _emit(record)
            if not result.converged:
                print(f"dynpr: warning: {approach} stopped at --max-iterations {options.max_iterations} before "
                      f"the change met --tolerance {options.tolerance:g}", file=sys.stderr)
            bar.update()
        if args.ranks_out:  # repeats give the same ranks: one table per run of an approach
            tables.append(ranks.table(result.ranks, vertex_ids, approach=approach, batch_index=index, top=args.top))
        return result.ranks

    def reference(current, bar):
        if not args.reference:
            return None
        ranks_ref = pagerank.reference(current, options, backend=backend)
        bar.update()
        return ranks_ref

    references = 1 if args.reference else 0  # reference solves per graph the runs are compared on
    if not args.batch:
        with _progress(args.repeat + references, "solves") as bar:
            run("static", None, graph, None, None, None, reference(graph, bar), _edge_counts(graph), bar)
    else:
        from dynpr.batches import apply_batch, read_batch_params, read_batches
        from dynpr.graph.validate import check_made_for

        batches = read_batches(args.batch)
        params = read_batch_params(args.batch)
        check_made_for(args.batch, params, graph, args.graph)
        # Random batches (the paper's static-graph experiment, `dynpr batch`) each update
        # GRAPH on their own; any other file is a sequence (temporal slices: GRAPH is the base).
        independent = params.get("experiment") == "random"
        old = graph
        # the Static solve the dynamic approaches start from, each run, each batch's reference solve
        with _progress(1 + len(batches) * (len(approaches) * args.repeat + references), "solves") as bar:
            previous = dict.fromkeys(approaches, pagerank.static(graph, options, backend=backend).ranks)
            bar.update()
            for index, batch in enumerate(batches):
                try:
                    current = apply_batch(old, batch, strict=True)
                except ValueError as err:
                    raise BatchError(f"{args.batch}: batch {index} does not fit {args.graph}: {err}") from None
                ref = reference(current, bar)
                counts = _edge_counts(current)
                for approach in approaches:
                    last = run(approach, old, current, batch, index, previous[approach], ref, counts, bar)
                    if not independent:
                        previous[approach] = last  # each dynamic approach carries its own ranks on
                if not independent:
                    old = current
    if args.ranks_out:
        check_mapped_files_unchanged()  # the tables' ids come from the map too
        ranks.write_table(tables, args.ranks_out)


def _run_batch(args) -> None:
    from dynpr.batches import batch_rng, random_batch, write_batches
    from dynpr.io.prepare import read_graph

    check_output(args.out, "--out", _inputs(args.graph))  # before the work, not after it
    graph, _ = read_graph(args.graph, edge_list=_edge_list(args))
    batches = [random_batch(graph, args.fraction, args.insert_share, batch_rng(args.seed, str(args.graph),
                                                                                args.fraction, repeat))
               for repeat in range(args.count)]
    write_batches(args.out, batches, made_for=graph, graph=str(args.graph), experiment="random", fraction=args.fraction,
                  insert_share=args.insert_share, seed=args.seed)
    _emit({"graph": args.graph, "out": args.out, "batches": len(batches),
           "deletions": sum(b.deletions for b in batches), "insertions": sum(b.insertions for b in batches)})


def _run_kahn(args) -> None:
    from dynpr.kahn import kahn
    from dynpr.io.prepare import read_graph

    backend = _backend(args.backend)
    graph, _ = read_graph(args.graph, edge_list=_edge_list(args))
    if not args.keep_self_loops:
        graph = graph.without_self_loops()
    result = kahn(graph, backend=backend)
    _emit({"graph": args.graph, "backend": result.backend, "device": result.device,
           "vertices": graph.num_vertices, **_edge_counts(graph), "is_dag": result.is_dag,
           "processed": result.processed, "levels": result.levels, "remaining": int(len(result.remaining)),
           "time_ms": result.time_ms})


def _message(error: BaseException) -> str:
    # KeyError's str() wraps the message in quotes; OSError from open() may not name the file.
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    if isinstance(error, OSError) and error.filename and str(error.filename) not in str(error):
        return f"{error.filename}: {error.strerror or error}"
    return str(error) or type(error).__name__


def _exit_code(error: BaseException) -> int:
    """2 for bad input (a missing or malformed file, flag or value), 1 for the environment."""
    if isinstance(error, DynprError):
        return error.exit_code
    if isinstance(error, (FileNotFoundError, IsADirectoryError, NotADirectoryError, ValueError, KeyError,
                          OverflowError)):
        return EXIT_INPUT
    return EXIT_RESOURCE


class _StderrHandler(logging.StreamHandler):
    """Log records to whatever ``sys.stderr`` is now (tests swap it per test)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _log_to_stderr() -> None:
    """Show the library's progress lines (download, prepare, reading the graph) on stderr.

    Like the progress bars, only on a terminal: piped or captured stderr keeps to
    the one-line errors scripts parse.
    """
    logger = logging.getLogger("dynpr")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("dynpr: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO if sys.stderr.isatty() else logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    """Run the ``dynpr`` command line; Ctrl-C at any point of it (the imports of a subcommand
    included) ends it with one line and exit status 130.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        Exit status: 0 on success, 2 for bad arguments or input, 1 for a problem of
        the environment (no GPU, network, disk, memory); see :mod:`dynpr.errors`.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("dynpr: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    """:func:`main`, Ctrl-C left to it."""
    from dynpr.graph.atomic_files import exit_on_sigterm
    from dynpr.graph.npz_files import exit_on_bus_error

    exit_on_sigterm()  # temporary files go on SIGTERM too
    if not faulthandler.is_enabled() and hasattr(sys.__stderr__, "fileno"):
        faulthandler.enable(sys.__stderr__)  # a crash names where it hit rather than exiting silently
    exit_on_bus_error()  # a mapped graph truncated under the run: one line naming it, not a crash
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    _log_to_stderr()
    try:
        {"pagerank": _run_pagerank, "batch": _run_batch, "kahn": _run_kahn}[args.command](args)
    except (DynprError, OSError, ValueError, KeyError, OverflowError, RuntimeError) as error:
        print(f"dynpr: error: {_message(error)}", file=sys.stderr)
        return _exit_code(error)
    except MemoryError as error:  # host or device memory; the checks and NumPy say how much was needed
        message = str(error) or "not enough memory for this graph"
        named = message if message.startswith(str(args.graph)) else f"{args.graph}: {message}"
        print(f"dynpr: error: {named}", file=sys.stderr)
        return EXIT_RESOURCE
    return 0
