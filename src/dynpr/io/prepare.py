"""From a catalog dataset (or any graph file) to a prepared graph: CSR + transpose + stats.

A prepared graph is ``results/graphs/{dataset}.npz`` (:meth:`dynpr.graph.graph.Graph.save`,
``vertex_ids`` = the original id of each vertex, absent where ids are their own (Matrix
Market, generated graphs), with a self-loop on every vertex, plus ``temporal_src``/``temporal_dst``/``temporal_time``
for temporal graphs) and ``results/graphs/{dataset}.json`` with its stats (counts of
vertices, edges, self-loops, duplicates removed and maximum degrees; :func:`build_graph`).
"""

from __future__ import annotations

import json
import logging
import tarfile
import time
import zlib
from pathlib import Path

import numpy as np

from dynpr.graph.atomic_files import sha256_file, write_text_atomic
from dynpr.io.catalog import Dataset, get_dataset, load_catalog, record_verified
from dynpr.errors import ChecksumError, CountMismatchError, GraphError, InputError
from dynpr.graph.graph import MAX_VERTICES, VERTEX_DTYPE, Graph, renumber, unique_sorted, with_self_loops
from dynpr.graph.hostmem import build_bytes, check_host_fits
from dynpr.io.edge_lists import EdgeListOptions, delimiter_option, detect_format_by_name, read_graph_file
from dynpr.io.readers import EdgeData, _open_text, read_mm_header
from dynpr.io.tar_streams import check_member, open_tar_stream, tar_member_stream
from dynpr.generate.rmat import generation_backend, rmat_graph
from dynpr.graph.validate import check_ids, npz_headers, read_graph_npz

log = logging.getLogger("dynpr.io.prepare")

Temporal = tuple[np.ndarray, np.ndarray, np.ndarray]
# what makes an argument a file path rather than a catalog name
GRAPH_SUFFIXES = {".txt", ".csv", ".tsv", ".gz", ".mtx", ".npz"}


def build_graph(edges: EdgeData, *, name: str = "graph",
                self_loops: bool = True) -> tuple[Graph, Temporal | None, np.ndarray, dict]:
    """Deduplicate edges, add a self-loop on every vertex, build CSR and transpose.

    Parameters
    ----------
    edges : EdgeData
        Parsed input. Without a matrix dimension (SNAP edge lists) the ids
        are renumbered densely in ascending order, as SNAP counts nodes
        (distinct endpoint ids) and the paper's |V| does; with one
        (``edges.num_vertices``: Matrix Market, R-MAT) ids are kept and
        isolated vertices included; a labelled list's ids are dense already, ``edges.labels`` theirs.
    name : str
        Used in error messages (file or dataset name).
    self_loops : bool
        Add the self-loops the input lacks (the paper's convention); ``False``
        keeps the input's edges as they are (NetworkX's convention).

    Returns
    -------
    graph : Graph
        With a self-loop on every vertex (unless ``self_loops`` is false).
    temporal : tuple of arrays or None
        ``(src int32, dst int32, time int64)`` in time order, self-loop events
        kept, for temporal input (renumbered ids).
    vertex_ids : ndarray of int64 or str
        Original id of each vertex (``arange(n)`` when not renumbered; the labels of a labelled list).
    stats : dict
        ``vertices`` (distinct ids, or the matrix dimension), ``max_id``,
        ``renumbered``, ``distinct_vertices``
        (distinct endpoint ids), ``edges`` (after dedup, before added self-loops,
        input self-loops included), ``edges_with_self_loops``, ``temporal_edges``,
        ``input_records``, ``self_loops_in_input`` (input records with u == v),
        ``distinct_self_loops_in_input``, ``duplicates_removed``,
        ``max_in_degree``/``max_out_degree`` (of the prepared graph, self-loops included).

    Raises
    ------
    ValueError
        If an id is negative, beyond int32, or not below the matrix dimension.
    """
    src, dst = edges.src, edges.dst
    if src.size == 0:
        raise ValueError(f"{name}: no edges")
    lo = min(int(src.min()), int(dst.min()))
    max_id = max(int(src.max()), int(dst.max()))
    if lo < 0:
        raise ValueError(f"{name}: negative vertex id {lo}")
    renumbered = edges.num_vertices is None
    if renumbered:
        vertex_ids, src, dst = renumber(src, dst)
        n = len(vertex_ids)
    else:
        n = int(edges.num_vertices)
    keeps_ids = renumbered or edges.labels is not None  # ids that are not their own travel with the graph
    if max_id >= n and not renumbered:
        raise ValueError(f"{name}: vertex id {max_id} is not below the dimension {n}")
    if n > MAX_VERTICES:  # before any array of n entries is allocated
        raise ValueError(
            f"{name}: {n} vertices do not fit int32 vertex ids (at most {MAX_VERTICES})"
        )
    if not renumbered:
        vertex_ids = edges.labels if edges.labels is not None else np.arange(n, dtype=np.int64)
    check_host_fits(build_bytes(len(src), n), f"{name}: graph")
    seen = np.zeros(n, dtype=bool)
    seen[src] = True
    seen[dst] = True
    loops_in = src == dst
    n64 = np.int64(n)
    keys = unique_sorted(src.astype(np.int64) * n64 + dst)
    if self_loops:
        all_keys = with_self_loops(keys, n)
        distinct_loops = n - (len(all_keys) - len(keys))
    else:  # NetworkX's convention: the input's edges as they are
        all_keys = keys
        distinct_loops = int(np.count_nonzero(keys // n64 == keys % n64))
    graph = Graph.from_keys(all_keys, n)
    del all_keys
    if keeps_ids:  # other ids are their own: nothing to store
        graph = Graph(graph.offsets, graph.targets, graph.in_offsets, graph.sources, vertex_ids)
    temporal = None
    if edges.time is not None:
        temporal = (src.astype(VERTEX_DTYPE), dst.astype(VERTEX_DTYPE), edges.time.astype(np.int64, copy=False))
    stats = {
        "vertices": n,
        "max_id": max_id,
        "renumbered": keeps_ids,
        "distinct_vertices": int(np.count_nonzero(seen)),
        "edges": int(len(keys)),
        "edges_with_self_loops": graph.num_edges,
        "temporal_edges": None if temporal is None else int(len(src)),
        "input_records": int(len(src)),
        "self_loops_in_input": int(np.count_nonzero(loops_in)),
        "distinct_self_loops_in_input": distinct_loops,
        "duplicates_removed": int(len(src) - len(keys)),
        "max_in_degree": int(graph.in_degree.max()),
        "max_out_degree": int(graph.out_degree.max()),
    }
    return graph, temporal, vertex_ids, stats


def check_counts(stats: dict, dataset: Dataset) -> None:
    """Compare prepared stats with the catalog's published counts.

    SNAP counts nodes as distinct endpoint ids; SuiteSparse and R-MAT as the
    matrix dimension. Edges include self-loops present in the input.

    Raises
    ------
    CountMismatchError
        Naming the first count that differs.
    """
    checks = [("vertices", "vertices", dataset.vertices), ("edges", "edges", dataset.edges),
              ("temporal_edges", "temporal_edges", dataset.temporal_edges)]
    for label, key, published in checks:
        if published is not None and stats[key] != published:
            raise CountMismatchError(
                f"{dataset.name}: prepared {label} = {stats[key]:,} ({key}) but the catalog publishes "
                f"{published:,}; the source file is corrupt or different from upstream "
                "(delete it and download again) or datasets/catalog.yaml is wrong"
            )


def check_prepared_file(npz_path: str | Path, dataset: Dataset | str) -> None:
    """Refuse a prepared graph whose vertex count (read from its ``.npy`` headers, nothing inflated) is
    not the catalog's: a ``results/graphs/<name>.npz`` copied from, or left by, another graph.

    Raises
    ------
    CountMismatchError
        ``<path>: holds a graph of N vertices, but the catalog's <name> has M; ...``.
    """
    ds = dataset if isinstance(dataset, Dataset) else get_dataset(dataset)
    offsets = npz_headers(npz_path, "prepared graph").get("offsets")
    if ds.vertices is None or offsets is None or len(offsets[0]) != 1:
        return  # nothing published to compare, or not a graph: reading it says so
    vertices = offsets[0][0] - 1
    if vertices != ds.vertices:
        raise CountMismatchError(f"{npz_path}: holds a graph of {vertices:,} vertices, but the catalog's {ds.name} "
                                 f"has {ds.vertices:,}: it is another graph's file; delete it and prepare it again "
                                 f"(snakemake prepares results/graphs/{ds.name}.npz)")


def matrix_market_size(path: str | Path) -> tuple[int, int] | None:
    """A Matrix Market file's (or SuiteSparse archive's) vertices and at most how many edges its graph
    has (each entry, both ways when symmetric, and a self-loop per vertex), from its header alone;
    None for another file, or one whose header the reader will refuse with its own message."""
    path = Path(path)
    fmt = detect_format_by_name(path) if path.is_file() else None
    try:
        if fmt == "matrix-market":
            with _open_text(path) as fh:
                header = read_mm_header(fh, str(path))
        elif fmt == "suitesparse-mm":
            with open_tar_stream(path) as tar:
                member = next((m for m in tar if m.isfile() and m.name.endswith((".mtx", ".mtx.gz"))), None)
                if member is None:
                    return None
                check_member(path, member)
                with tar_member_stream(path, member.name, tar, member) as fh:
                    header = read_mm_header(fh, f"{path}:{member.name}")
        else:
            return None
    except (InputError, OSError, EOFError, tarfile.TarError, zlib.error):
        return None
    return header.rows, header.entries * (1 if header.symmetry == "general" else 2) + header.rows


def generated_stats(graph: Graph) -> dict:
    """The stats of :func:`build_graph` for a generated graph (distinct non-self-loop edges, self-loops added)."""
    n = graph.num_vertices
    touched = np.flatnonzero((np.diff(graph.offsets) > 1) | (np.diff(graph.in_offsets) > 1))
    edges = graph.num_edges - n
    return {
        "vertices": n, "max_id": int(touched[-1]) if len(touched) else -1, "renumbered": False,
        "distinct_vertices": len(touched), "edges": edges, "edges_with_self_loops": graph.num_edges,
        "temporal_edges": None, "input_records": edges, "self_loops_in_input": 0,
        "distinct_self_loops_in_input": 0, "duplicates_removed": 0,
        "max_in_degree": int(graph.in_degree.max()), "max_out_degree": int(graph.out_degree.max()),
    }


def load_dataset(dataset: Dataset, source: str | Path | None = None, *,
                 self_loops: bool = True, backend: str = "auto") -> tuple[Graph, Temporal | None, dict, str | None]:
    """A dataset's graph from its source file, or generated in chunks (R-MAT).

    ``self_loops=False`` keeps the input's edges as they are (see :func:`build_graph`);
    generated graphs always have theirs. ``backend`` (``auto``, ``cpu``, ``gpu``) says where
    R-MAT graphs may be generated (:func:`dynpr.generate.rmat.generation_backend`; the same graph either way).

    Returns
    -------
    graph : Graph
        With a self-loop on every vertex and ``vertex_ids`` when renumbered.
    temporal : tuple or None
    stats : dict
        See :func:`build_graph`.
    source_sha256 : str or None
        None for generated graphs.
    """
    t0 = time.perf_counter()
    if dataset.kind == "generated":
        if not self_loops:
            raise InputError(f"{dataset.name}: a generated graph always has a self-loop on every vertex; "
                             "reading it without self-loops needs an edge-list file")
        where = generation_backend(dataset.scale, dataset.edge_factor, backend)
        graph = rmat_graph(dataset.scale, dataset.edge_factor, dataset.seed, backend=where)
        log.info("%s: generated R-MAT scale %d edge factor %d on the %s in %.2f s", dataset.name, dataset.scale,
                 dataset.edge_factor, where.upper(), time.perf_counter() - t0)
        return graph, None, generated_stats(graph), None
    edges, digest = read_dataset(dataset, source)
    t_read = time.perf_counter() - t0
    log.info("%s: read %d edge records in %.2f s", dataset.name, len(edges.src), t_read)
    graph, temporal, _, stats = build_graph(edges, name=dataset.name, self_loops=self_loops)
    log.info("%s: built CSR + transpose in %.2f s", dataset.name, time.perf_counter() - t0 - t_read)
    return graph, temporal, stats, digest


def read_dataset(dataset: Dataset, source: str | Path | None = None) -> tuple[EdgeData, str | None]:
    """Parse a dataset's source file and verify its checksum.

    Parameters
    ----------
    dataset : Dataset
        Catalog entry.
    source : str or Path, optional
        Input file; defaults to ``dataset.source_path``. Ignored for generated graphs.

    Returns
    -------
    edges : EdgeData
    source_sha256 : str
    """
    if dataset.kind == "generated":
        raise ValueError(f"{dataset.name} is generated (R-MAT): build it with load_dataset")
    source = Path(source) if source is not None else dataset.source_path
    if not source.is_file():
        raise FileNotFoundError(f"{dataset.name}: source file {source} is missing; run "
                                f"`snakemake --cores 1 {dataset.raw_path}` (or set DYNPR_MIRROR) to download it")
    digest = sha256_file(source)
    if dataset.sha256 is not None and digest != dataset.sha256 and Path(source).name == dataset.file_name:
        raise ChecksumError(f"{source}: sha256 {digest} differs from the catalog's {dataset.sha256}; "
                         "the file is corrupt or modified: restore it or download again")
    return read_graph_file(source, dataset.format, dataset_edge_list(dataset)), digest


def dataset_edge_list(dataset: Dataset) -> EdgeListOptions:
    """How the catalog says a dataset's text edge list is read (temporal by its format)."""
    return EdgeListOptions(delimiter=delimiter_option(dataset.delimiter), header=dataset.header,
                           labels=dataset.labels, undirected=dataset.undirected)


def prepare(dataset: str | Dataset, npz_path: str | Path, json_path: str | Path, *,
            source: str | Path | None = None, backend: str = "auto") -> dict:
    """Prepare one dataset: parse, build, check against the catalog's counts, write npz + json atomically.

    Parameters
    ----------
    dataset : str or Dataset
        Catalog name or entry.
    npz_path, json_path : str or Path
        Outputs; nothing is written at either path unless everything succeeds.
    source : str or Path, optional
        Input file (default: the embedded copy, else ``datasets/raw/<file>``).
    backend : str
        Where a generated graph may be made (``auto``, ``cpu``, ``gpu``; see :func:`load_dataset`).

    Returns
    -------
    dict
        The stats written to ``json_path``.
    """
    ds = dataset if isinstance(dataset, Dataset) else get_dataset(dataset)
    t0 = time.perf_counter()
    graph, temporal, stats, digest = load_dataset(ds, source, backend=backend)
    log.info("%s: %d vertices, %d edges with self-loops", ds.name, graph.num_vertices, graph.num_edges)
    stats = {"dataset": ds.name, "kind": ds.kind, "format": ds.format, **stats, "source_sha256": digest}
    if ds.kind == "generated":
        stats.update(scale=ds.scale, edge_factor=ds.edge_factor, seed=ds.seed)
    check_counts(stats, ds)
    _record_download(ds, source, digest)
    extra = {}  # vertex_ids travel with the graph (Graph.save)
    if temporal is not None:
        extra.update({"temporal_src": temporal[0], "temporal_dst": temporal[1], "temporal_time": temporal[2]})
    # json last: it is the rule's "done" marker, and a failure before it leaves neither file
    # in a state Snakemake would accept (it removes outputs of failed jobs)
    graph.save(npz_path, **extra)
    write_text_atomic(json_path, json.dumps(stats, indent=2) + "\n")
    log.info("%s: wrote %s and %s in %.2f s total", ds.name, npz_path, json_path, time.perf_counter() - t0)
    return stats


def _record_download(ds: Dataset, source: str | Path | None, digest: str | None) -> None:
    """Lock a downloaded file's sha256 and size once its counts matched the catalog."""
    source = Path(source) if source is not None else ds.source_path
    if digest is not None and ds.embedded is None and source is not None and source.name == ds.file_name:
        record_verified(ds, source, digest)


def load_prepared(npz_path: str | Path) -> tuple[Graph, Temporal | None]:
    """Read a prepared graph, checked and verified against its stored sha256 (:meth:`Graph.load`, plus
    the temporal edges).

    Returns
    -------
    graph : Graph
        With ``vertex_ids``, the original id of each vertex, when the file has them.
    temporal : tuple of (src int32, dst int32, time int64) or None
        The time-ordered edge list of a temporal graph.

    Raises
    ------
    GraphError
        If the file is not a prepared graph, its arrays are inconsistent, or it
        was modified since it was written (see :func:`dynpr.graph.validate.read_graph_npz`).
    """
    return _load_prepared(npz_path)[:2]


def _load_prepared(npz_path: str | Path) -> tuple[Graph, Temporal | None, np.ndarray]:
    """:func:`load_prepared`, also returning each vertex's original id."""
    graph, extra = read_graph_npz(npz_path)
    vertex_ids = graph.original_ids()
    if "temporal_src" not in extra:
        return graph, None, vertex_ids
    src, dst, when = (extra.get(f"temporal_{k}") for k in ("src", "dst", "time"))
    if dst is None or when is None or not (src.ndim == dst.ndim == when.ndim == 1) \
            or not (len(src) == len(dst) == len(when)) or not np.issubdtype(when.dtype, np.integer):
        raise GraphError(f"{npz_path}: temporal_src, temporal_dst and temporal_time must be integer arrays of "
                         "one length; delete it and prepare it again")
    for name, ids in (("temporal_src", src), ("temporal_dst", dst)):
        check_ids(f"{npz_path}: {name}", ids, graph.num_vertices)
    if len(when) > 1 and not bool(np.all(when[1:] >= when[:-1])):
        at = int(np.argmax(when[1:] < when[:-1])) + 1
        raise GraphError(f"{npz_path}: temporal_time decreases at edge {at}; the temporal edges must be in time "
                         "order: delete it and prepare it again")
    absent = ~graph.has_edges(src, dst)
    if bool(absent.any()):
        at = int(np.argmax(absent))
        raise GraphError(f"{npz_path}: temporal edge {at} ({int(src[at])}, {int(dst[at])}) is not an edge of the "
                         "graph: delete it and prepare it again")
    return graph, (src.astype(VERTEX_DTYPE, copy=False), dst.astype(VERTEX_DTYPE, copy=False),
                   when.astype(np.int64, copy=False)), vertex_ids


def read_graph(graph: str | Path, *, results: str | Path = "results/graphs",
               edge_list: EdgeListOptions = EdgeListOptions()) -> tuple[Graph, Temporal | None]:
    """Load a graph given a file path or a catalog name (for the CLI).

    Parameters
    ----------
    graph : str or Path
        A prepared ``.npz``; a graph file (``.txt``, ``.txt.gz``, ``.mtx``,
        ``.mtx.gz``, ``.tar.gz``); or a catalog name, for which a prepared
        ``{results}/{name}.npz`` is used when present, else the source is read
        (downloaded first if needed, honouring ``DYNPR_MIRROR``).
    edge_list : EdgeListOptions
        How a text edge list file is read (:func:`dynpr.io.edge_lists.read_edge_list`); a prepared
        graph or a catalog name (read as the catalog says) takes only the defaults.

    Returns
    -------
    graph : Graph
        With a self-loop on every vertex.
    temporal : tuple or None
    """
    return read_graph_with_ids(graph, results=results, edge_list=edge_list)[:2]


def read_graph_with_ids(graph: str | Path, *, results: str | Path = "results/graphs", self_loops: bool = True,
                        edge_list: EdgeListOptions = EdgeListOptions()) -> tuple[Graph, Temporal | None, np.ndarray]:
    """:func:`read_graph`, also returning each vertex's original id.

    Parameters
    ----------
    graph, results, edge_list
        See :func:`read_graph`.
    self_loops : bool
        ``False``: the input's edges as they are, no self-loop added (NetworkX's
        convention). A prepared ``.npz`` cannot tell added self-loops from the
        input's, so it is accepted then only when its ``.json`` beside it
        counts no self-loop in the input; a catalog name is read from its source.

    Returns
    -------
    graph : Graph
    temporal : tuple or None
    vertex_ids : numpy.ndarray of int64 or str
        Original id of each vertex (SNAP ids before dense renumbering, a labelled list's labels).

    Raises
    ------
    FileNotFoundError
        If a path does not exist.
    ValueError
        If ``self_loops`` is false for a prepared graph whose input had self-loops
        (or whose ``.json`` is missing), or ``edge_list`` is set for a prepared graph or a catalog name.
    """
    path = Path(graph)
    if path.is_file():
        if path.suffix == ".npz":
            _check_no_edge_list(path, "a prepared graph", edge_list)
            built, temporal, vertex_ids = _load_prepared(path)
            if not self_loops:
                _check_no_input_loops(path)
                built = built.without_self_loops()
            return built, temporal, vertex_ids
        built, temporal, vertex_ids, _ = build_graph(read_graph_file(path, options=edge_list), name=str(path),
                                                     self_loops=self_loops)
        return built, temporal, vertex_ids
    if path.is_dir():
        raise InputError(f"{graph}: is a folder; give a graph file in it or a catalog name")
    if path.suffix in GRAPH_SUFFIXES or len(path.parts) > 1:
        raise FileNotFoundError(f"{graph}: no such file")
    catalog = load_catalog()
    ds = get_dataset(str(graph), catalog)
    _check_no_edge_list(path, "a catalog dataset (the catalog says how it is read)", edge_list)
    prepared = Path(results) / f"{ds.name}.npz"
    if prepared.is_file() and self_loops:
        check_prepared_file(prepared, ds)
        return _load_prepared(prepared)
    fetched = ds.kind != "generated" and not ds.source_path.is_file()
    if fetched:
        from dynpr.io.download import fetch_dataset

        fetch_dataset(ds)
    try:
        built, temporal, stats, digest = load_dataset(ds, self_loops=self_loops)
        # the same comparison with the catalog as the prepare rule makes
        check_counts(stats, ds)
    except (InputError, OSError):
        if fetched:  # a wrong or corrupt file from the server or mirror is not kept
            ds.source_path.unlink(missing_ok=True)
        raise
    _record_download(ds, ds.source_path, digest)
    return built, temporal, built.original_ids()


def _check_no_edge_list(graph: Path, what: str, edge_list: EdgeListOptions) -> None:
    """Refuse edge-list options for a graph that is not read as a text edge list."""
    if not edge_list.is_default:
        raise InputError(f"{graph}: is {what}, not a text edge list: delimiter, header, labels, undirected and "
                         "temporal do not apply")


def _check_no_input_loops(npz_path: Path) -> None:
    """A prepared graph may lose its self-loops only if its input had none (its .json says)."""
    stats_path = npz_path.with_suffix(".json")
    try:
        loops = json.loads(stats_path.read_text())["distinct_self_loops_in_input"]
    except (OSError, ValueError, KeyError):
        raise InputError(f"{npz_path}: without self-loops needs {stats_path.name} beside it (to tell the "
                         "input's self-loops from the added ones); give the source graph file instead") from None
    if loops:
        raise InputError(f"{npz_path}: its input had {loops} self-loops, which cannot be told from the added "
                         "ones; give the source graph file instead")
