"""CSR segmenting for Static and ND: a layout whose gathers stay in the L2, its builder and its CPU twin.

A pull iteration gathers ``C[u] = R[u] / d[u]`` for every in-edge. Where the n
contributions (8n bytes) do not fit the L2, almost every gather misses and moves
a 32-byte sector for 8 useful bytes (docs/scaling.md, "Static against the
traffic it cannot avoid"). CSR segmenting (Zhang et al., "Making caches work
for graph analytics", 2017) splits the source ids into ``S`` ranges of
``width`` vertices whose contributions fit a share of the L2; each segment
keeps a sub-CSR of the in-edges whose sources fall in it (its sub-rows, one per
destination with at least one such in-edge, in ascending destination order).
An iteration runs the segments one after another, each adding its sub-rows'
sums into a per-destination accumulator, then a finishing pass computes the new
ranks and the L-infinity change (docs/locality.md has the traffic model).

The builder is one function over NumPy or CuPy arrays (:func:`build_layout`):
the CPU twin and the device's layout are the same code. The GPU kernels and
driver are :mod:`dynpr.gpu.locality`; :func:`static_segmented` is their twin,
summing in their order: segment by segment, each short sub-row's edges in
stored order (long sub-rows are summed in pieces on the GPU, whose sums differ
from the twin's in the last bits only).

The orders the layouts and the benchmarks number vertices in live here too: hub-first
(:func:`hub_first_ids`, the default engine's) and by communities (:func:`community_labels`,
:func:`community_ids`), and the graph or in-CSR renamed by one (:func:`relabelled_graph`,
:func:`relabelled_in_csr`).

Importing this module needs no CuPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dynpr.arrays import array_fields
from dynpr.graph import Graph, array_module
from dynpr.pagerank.options import PageRankOptions

#: L2 of the H100 (50 MiB), the device the default segment width is sized for.
H100_L2_BYTES = 50 << 20
#: Share of the L2 one segment's contributions take by default: the rest holds the streamed
#: sources, offsets and the accumulator's lines while the segment runs.
DEFAULT_L2_SHARE = 0.5
#: Vertices per segment are a multiple of this (32 doubles: 256 bytes, whole cache lines).
WIDTH_ALIGN = 32
#: A sub-row of more edges than this is summed in pieces of PIECE_EDGES, a warp per piece; shorter
#: ones take a thread each (the default; build_layout takes another). 32: a warp's lanes each take
#: at least one edge.
SHORT_EDGES = 32
#: Edges per piece of a long sub-row (16 per lane of a warp).
PIECE_EDGES = 512
#: Vertex orders the layout is built on: the default's hub-first relabelling (descending in-degree,
#: dynpr.gpu.classes.Relabel) or the ids as given.
ORDERS = ("hub", "given")


def segment_width(n: int, l2_bytes: int = H100_L2_BYTES, share: float = DEFAULT_L2_SHARE) -> int:
    """Vertices per segment: as many contributions (8 bytes each) as fit ``share`` of ``l2_bytes``,
    rounded down to a multiple of :data:`WIDTH_ALIGN` (at least that), and no more than n needs.

    Raises
    ------
    ValueError
        For a non-positive share, L2 size or vertex count.
    """
    if not (share > 0 and l2_bytes > 0 and n > 0):
        raise ValueError(f"segment_width needs n > 0, l2_bytes > 0 and share > 0, got {n}, {l2_bytes}, {share}")
    width = max(WIDTH_ALIGN, int(share * l2_bytes) // 8 // WIDTH_ALIGN * WIDTH_ALIGN)
    return min(width, -(-n // WIDTH_ALIGN) * WIDTH_ALIGN)


def num_segments(n: int, width: int) -> int:
    """Segments of ``width`` source ids that cover n vertices."""
    return -(-n // width)


def relabelled_graph(graph: Graph, new_id) -> Graph:
    """The graph with vertex v renamed new_id[v], both CSRs rebuilt with sorted rows: what a
    locality order done once before the engines gives them. NumPy or CuPy arrays (the result lives
    where they are); two sorts of the m renamed edge keys, no loop per edge or vertex."""
    xp = array_module(graph.offsets)
    n = graph.num_vertices
    source = xp.repeat(xp.arange(n, dtype=np.int64), xp.diff(graph.offsets))
    target = new_id[graph.targets].astype(np.int64)
    source = new_id[source].astype(np.int64)
    csrs = []
    for row, col in ((source, target), (target, source)):  # the out-CSR, then the in-CSR
        keys = xp.sort(row * n + col)
        offsets = xp.zeros(n + 1, dtype=np.int64)
        xp.cumsum(xp.bincount(keys // n, minlength=n), out=offsets[1:])
        csrs += [offsets, (keys % n).astype(np.int32)]
        del keys
    return Graph(*csrs, None)


@dataclass
class SegmentLayout:
    """The segmented in-CSR of one graph (NumPy or CuPy arrays; ids as the layout's order gives them).

    Attributes
    ----------
    n, width : vertices, and source ids per segment (segment s holds sources [s*width, (s+1)*width)).
    short_edges : a sub-row of more edges than this is a long row, summed in pieces.
    segment_rows : int64 S+1, segment s's sub-rows are [segment_rows[s], segment_rows[s+1]).
    rows : int32 r, the destination of each sub-row (ascending within a segment).
    row_offsets : int64 r+1, each sub-row's edges in :attr:`sources`.
    sources : int32 m, the in-edges' sources, segment by segment, each sub-row in the in-CSR's order.
    segment_long : int64 S+1, segment s's long sub-rows are ``long_rows[segment_long[s]:segment_long[s+1]]``.
    long_rows : int32 l, the sub-rows of more than ``short_edges`` edges.
    piece_first : int64 l+1, long row j is summed in pieces [piece_first[j], piece_first[j+1]).
    piece_row : int32 p, the long row (index into long_rows) each piece belongs to.
    """

    n: int
    width: int
    short_edges: int
    segment_rows: object
    rows: object
    row_offsets: object
    sources: object
    segment_long: object
    long_rows: object
    piece_first: object
    piece_row: object

    @property
    def segments(self) -> int:
        return len(self.segment_rows) - 1

    @property
    def nbytes(self) -> int:
        """Bytes of the layout's arrays."""
        return sum(a.nbytes for a in self.arrays().values())

    def arrays(self) -> dict:
        """The array fields by name."""
        return array_fields(self)



def layout_device_bytes(n: int, m: int, segments: int, rows: int | None = None,
                        short_edges: int = SHORT_EDGES) -> int:
    """Device bytes of a segmented Static/ND run beyond the graph itself, per this model:

    - the layout (:class:`SegmentLayout`): sources 4m, sub-row destinations 4r and offsets
      8(r+1), segment bounds 16(S+1), long rows and their pieces at most 4r + 8(r+1) + 4m/(s+1)
      (a long row has more than s = ``short_edges`` edges, a piece at least one of them),
      and the pieces' partial sums 8 per piece;
    - the run: hub-first new ids 4n and relabelled 1/d 8n, ranks and contributions (two of each)
      32n, the accumulator 8n, the loop state 48 bytes.

    ``rows`` is r, the sub-rows (each segment's destinations with an in-edge from it), known once
    built; unless given, its bound min(m, S·n). The build's transient peak (the relabelled in-CSR
    and the per-segment index arrays, about 12 bytes per edge of the largest segment more) is not
    in it.

    Raises
    ------
    ValueError
        On a negative count or no segment.
    """
    if min(n, m, short_edges) < 0 or segments < 1 or (rows is not None and rows < 0):
        raise ValueError(f"layout_device_bytes needs n, m, rows >= 0 and segments >= 1, got {n}, {m}, {segments}, "
                         f"{rows}")
    r = min(m, segments * n) if rows is None else rows
    pieces = m // (short_edges + 1)
    layout = 4 * m + 4 * r + 8 * (r + 1) + 16 * (segments + 1) + 4 * r + 8 * (r + 1) + 4 * pieces + 8 * pieces
    run = 4 * n + 8 * n + 32 * n + 8 * n + 48
    return layout + run


def build_layout(in_offsets, sources, width: int, short_edges: int = SHORT_EDGES) -> SegmentLayout:
    """The segmented layout of an in-CSR, by segments of ``width`` source ids, sub-rows of more than
    ``short_edges`` edges listed as long rows (NumPy or CuPy arrays: the result lives where they
    are). One pass of array operations per segment, no loop per edge or vertex.

    Raises
    ------
    ValueError
        For a width below 1 or a negative ``short_edges``.
    """
    if width < 1 or short_edges < 0:
        raise ValueError(f"segment width must be >= 1 and short_edges >= 0, got {width}, {short_edges}")
    xp = array_module(in_offsets)
    n, m = len(in_offsets) - 1, int(sources.size)
    segments = max(1, num_segments(n, width))
    segment_of = (sources // width).astype(np.int32)
    out_sources = xp.empty(m, dtype=np.int32)
    rows, offsets, longs, firsts = [], [], [], []
    segment_rows = np.zeros(segments + 1, dtype=np.int64)
    segment_long = np.zeros(segments + 1, dtype=np.int64)
    filled = 0
    for s in range(segments):
        positions = xp.flatnonzero(segment_of == s)
        count = int(positions.size)
        out_sources[filled:filled + count] = sources[positions]
        row_of_edge = xp.searchsorted(in_offsets, positions, side="right") - 1
        del positions
        starts = xp.flatnonzero(xp.diff(row_of_edge) != 0) + 1 if count else xp.empty(0, dtype=np.int64)
        starts = xp.concatenate((xp.zeros(min(count, 1), dtype=np.int64), starts.astype(np.int64)))
        rows.append(row_of_edge[starts].astype(np.int32))
        del row_of_edge
        offsets.append(starts + filled)
        lengths = xp.diff(xp.concatenate((starts, xp.asarray([count], dtype=np.int64))))
        long = xp.flatnonzero(lengths > short_edges)
        longs.append((long + int(segment_rows[s])).astype(np.int32))
        firsts.append(-(-lengths[long] // PIECE_EDGES))
        segment_rows[s + 1] = segment_rows[s] + int(starts.size)
        segment_long[s + 1] = segment_long[s] + int(long.size)
        filled += count
    row_offsets = xp.concatenate(offsets + [xp.asarray([m], dtype=np.int64)])
    pieces = xp.concatenate(firsts).astype(np.int64)
    piece_first = xp.concatenate((xp.zeros(1, dtype=np.int64), xp.cumsum(pieces)))
    total_pieces = int(piece_first[-1])
    piece_row = (xp.searchsorted(piece_first[1:], xp.arange(total_pieces, dtype=np.int64), side="right")
                 .astype(np.int32))
    return SegmentLayout(n, width, short_edges, xp.asarray(segment_rows), xp.concatenate(rows), row_offsets,
                         out_sources, xp.asarray(segment_long), xp.concatenate(longs), piece_first, piece_row)


def hub_first_ids(in_offsets: np.ndarray) -> np.ndarray:
    """New id of every vertex when numbered by descending in-degree, ties by id (the order of
    :func:`dynpr.gpu.classes.hub_first_order`, whose sort is stable too)."""
    order = np.argsort(in_offsets[:-1] - in_offsets[1:], kind="stable")
    new_id = np.empty(order.size, dtype=np.int32)
    new_id[order] = np.arange(order.size, dtype=np.int32)
    return new_id


#: Label-propagation rounds of :func:`community_labels`; a random half of the vertices moves in each.
COMMUNITY_ROUNDS = 8


def community_labels(in_offsets, sources, rounds: int = COMMUNITY_ROUNDS, seed: int = 1):
    """Every vertex's community (a vertex id standing for it), by label propagation on the graph made
    symmetric, self-loops left out. NumPy or CuPy arrays (the result lives where they are; the same
    on both).

    Each round a random half of the vertices (``seed``; the other half keeps its labels, so that two
    sides of an edge do not swap labels forever) takes the label most of its neighbours carry, the
    smallest of tied ones. Each round sorts the 2m neighbour labels; no loop per edge or vertex.
    """
    xp = array_module(in_offsets)
    n = len(in_offsets) - 1
    target = xp.repeat(xp.arange(n, dtype=np.int64), xp.diff(in_offsets))
    kept = sources != target
    vertex = xp.concatenate((target[kept], sources[kept].astype(np.int64)))
    neighbour = xp.concatenate((sources[kept].astype(np.int64), target[kept]))
    del target, kept
    labels = xp.arange(n, dtype=np.int64)
    draws = np.random.default_rng(seed)
    for _ in range(rounds):  # a loop over rounds, each vectorized
        key = xp.sort(vertex * n + labels[neighbour])  # (vertex, neighbour's label), grouped
        first = xp.flatnonzero(xp.concatenate((xp.ones(1, dtype=bool), key[1:] != key[:-1])))
        votes = xp.diff(xp.concatenate((first, xp.asarray([key.size], dtype=first.dtype))))
        pair = key[first]
        owner, label = pair // n, pair % n
        most = int(votes.max()) + 1 if votes.size else 1
        best = xp.argsort(owner * most + (most - 1 - votes), kind="stable")  # most votes first, then smallest label
        owner, label = owner[best], label[best]
        leads = xp.concatenate((xp.ones(min(1, owner.size), dtype=bool), owner[1:] != owner[:-1]))
        moving = xp.asarray(draws.random(n) < 0.5)
        winner = labels.copy()
        winner[owner[leads]] = label[leads]
        labels = xp.where(moving, winner, labels)
        del key, first, votes, pair, owner, label, best, leads, moving, winner
    return labels


def community_ids(in_offsets, labels):
    """New id of every vertex in a community order: the communities of ``labels``
    (:func:`community_labels`) numbered largest first, and within one by descending in-degree, ties
    by id. NumPy or CuPy arrays.

    The stand-in for Rabbit order (Arai et al., IPDPS 2016) that issue 35 lists: both put a
    community's vertices on consecutive ids, so that the in-neighbours of a vertex, if they share
    its community, share sectors.
    """
    xp = array_module(in_offsets)
    n = len(in_offsets) - 1
    size = xp.bincount(labels, minlength=n)[labels]
    order = xp.argsort(in_offsets[:-1] - in_offsets[1:], kind="stable")  # stable sorts, the last key first
    order = order[xp.argsort(labels[order], kind="stable")]
    order = order[xp.argsort(-size[order], kind="stable")]
    new_id = xp.empty(n, dtype=np.int32)
    new_id[order] = xp.arange(n, dtype=np.int32)
    return new_id


def relabelled_in_csr(graph: Graph, new_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The in-CSR in new ids: row new_id[v] holds v's in-edges, their sources renamed, in their
    original order (as :class:`dynpr.gpu.classes.Relabel` builds it). NumPy or CuPy arrays."""
    xp = array_module(graph.in_offsets)
    order = xp.argsort(new_id, kind="stable")
    degree = xp.diff(graph.in_offsets)[order]
    offsets = xp.zeros(graph.num_vertices + 1, dtype=np.int64)
    xp.cumsum(degree, out=offsets[1:])
    starts = graph.in_offsets[order]
    positions = xp.repeat(starts - offsets[:-1], degree) + xp.arange(int(offsets[-1]), dtype=np.int64)
    return offsets, new_id[graph.sources[positions]]


@dataclass
class SegmentedResult:
    """Ranks in the graph's ids, iterations and whether the last change met the tolerance."""

    ranks: np.ndarray
    iterations: int
    converged: bool


def static_segmented(graph: Graph, options: PageRankOptions | None = None, *, width: int, order: str = "hub",
                     start: np.ndarray | None = None) -> SegmentedResult:
    """Static (or ND from ``start``) over the segmented layout, on the host: the twin of
    :func:`dynpr.gpu.locality.solve`. Each iteration sums every segment's sub-rows into an
    accumulator (a unit-weight sub-CSR times C, summed in stored order), segment after segment,
    then r = c0 + alpha * acc. Host arrays only; every vertex needs an out-edge (the paper's
    self-loops).

    Raises
    ------
    ValueError
        For an unknown order or a graph with a dangling vertex.
    """
    options = options or PageRankOptions()
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    n = graph.num_vertices
    degree = np.diff(graph.offsets)
    if (degree == 0).any():
        raise ValueError("static_segmented needs an out-edge on every vertex (the paper's self-loops)")
    if order == "hub":
        new_id = hub_first_ids(graph.in_offsets)
        in_offsets, sources = relabelled_in_csr(graph, new_id)
        inv = np.empty(n)
        inv[new_id] = 1.0 / degree
    else:
        new_id, in_offsets, sources, inv = None, graph.in_offsets, graph.sources, 1.0 / degree
    layout = build_layout(in_offsets, sources, width)
    blocks = []
    for s in range(layout.segments):
        first, last = int(layout.segment_rows[s]), int(layout.segment_rows[s + 1])
        offsets = layout.row_offsets[first:last + 1]
        sub = sp.csr_array((np.ones(int(offsets[-1] - offsets[0])), layout.sources[offsets[0]:offsets[-1]],
                            offsets - offsets[0]), shape=(last - first, n))
        blocks.append((layout.rows[first:last], sub))
    ranks = np.full(n, 1.0 / n) if start is None else np.asarray(start, dtype=np.float64)
    if new_id is not None:
        relabelled = np.empty(n)
        relabelled[new_id] = ranks
        ranks = relabelled
    base, alpha = (1.0 - options.alpha) / n, options.alpha
    acc = np.zeros(n)
    iterations = 0
    while True:
        contributions = ranks * inv
        for rows, sub in blocks:
            acc[rows] += sub @ contributions
        new = acc * alpha
        new += base
        acc[:] = 0.0
        change = float(np.max(np.abs(new - ranks)))
        ranks = new
        iterations += 1
        if change <= options.tolerance or iterations >= options.max_iterations:
            break
    return SegmentedResult(ranks[new_id] if new_id is not None else ranks, iterations, change <= options.tolerance)
