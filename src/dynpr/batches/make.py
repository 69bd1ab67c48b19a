"""Making batches (paper section 5.1.4): temporal slices and random 80/20 batches.

* temporal slices (:func:`temporal_batches`): the first ``base_fraction`` of a
  graph's time-ordered temporal edges plus a self-loop on every vertex form the
  base graph; the following temporal edges, ``B`` at a time, are batches of
  insertions applied one after another;
* random batches (:func:`random_batch`): an 80 % : 20 % mix of insertions of
  uniformly random absent vertex pairs and deletions of uniformly chosen
  existing edges, each applied on its own to a static graph.

Making a batch never builds the int64 keys of every edge, so host memory stays near the
graph's own bytes.
"""

from __future__ import annotations

import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from dynpr.batches.batch import Batch, split_keys
from dynpr.errors import BatchError
from dynpr.graph.graph import (VERTEX_DTYPE, Graph, contains_sorted, edge_keys, on_device, row_lower_bound, rows_of_positions,
                         to_host, unique_sorted)
from dynpr.graph.validate import check_ids

# Most pairs drawn per rejection-sampling round: bounds memory on huge graphs.
_MAX_DRAW = 1 << 22


def _first_occurrences(keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the first occurrence of every distinct key, in input order."""
    first = np.zeros(len(keys), dtype=bool)
    first[np.unique(keys, return_index=True)[1]] = True
    return first


# --------------------------------------------------------------------------- temporal slices


@dataclass(frozen=True, eq=False)
class TemporalStats:
    """What :func:`temporal_batches` read and dropped.

    Every temporal edge read into a batch is counted in exactly one of
    ``inserted``, ``dropped_present`` (the edge is in the base or an earlier
    batch), ``dropped_repeated`` (it occurred earlier in the same batch) and
    ``dropped_self_loops`` (every vertex already has its self-loop). The
    per-batch arrays are int64 of length ``num_batches``.
    """

    temporal_edges: int  # |E_T|, self-loop events included
    base_events: int  # temporal edges read into the base graph
    base_edges: int  # edges of the base graph, self-loops on every vertex included
    batch_size: int  # B, temporal edges per full batch
    events: np.ndarray  # temporal edges read into each batch (< B once the stream runs out)
    inserted: np.ndarray
    dropped_present: np.ndarray
    dropped_repeated: np.ndarray
    dropped_self_loops: np.ndarray

    @property
    def short_batches(self) -> int:
        """Number of batches that got fewer than ``batch_size`` temporal edges."""
        return int(np.count_nonzero(self.events < self.batch_size))


def temporal_base(temporal_src, temporal_dst, num_vertices: int, base_fraction: float) -> tuple[Graph, int]:
    """The base graph of a temporal experiment.

    Parameters
    ----------
    temporal_src, temporal_dst : array_like of int
        Temporal edges in time order (self-loop events and repeats included).
    num_vertices : int
        Vertex count of the full dataset; the base keeps all of them.
    base_fraction : float
        Share of the temporal edges loaded into the base, in [0, 1].

    Returns
    -------
    base : Graph
        The first ``round(base_fraction * |E_T|)`` temporal edges, deduplicated,
        plus a self-loop on every vertex.
    base_events : int
        Number of temporal edges read into the base.
    """
    src = np.asarray(temporal_src)
    dst = np.asarray(temporal_dst)
    if src.shape != dst.shape or src.ndim != 1:
        raise ValueError(f"temporal src and dst must be 1-D arrays of one length, got {src.shape} and {dst.shape}")
    if not 0.0 <= base_fraction <= 1.0:
        raise ValueError(f"base_fraction must lie in [0, 1], got {base_fraction}")
    base_events = int(round(base_fraction * len(src)))
    base = Graph.from_edges(src[:base_events], dst[:base_events], num_vertices, self_loops=True)
    return base, base_events


def temporal_batches(
    temporal_src,
    temporal_dst,
    num_vertices: int,
    base_fraction: float,
    fraction: float,
    num_batches: int,
) -> tuple[Graph, list[Batch], TemporalStats]:
    """Cut a time-ordered edge stream into a base graph and consecutive insertion batches.

    Parameters
    ----------
    temporal_src, temporal_dst : array_like of int
        Temporal edges, already stable-sorted by time; |E_T| = their length.
    num_vertices : int
        Vertex count of the full dataset (never changes from batch to batch).
    base_fraction : float
        Share of the temporal edges in the base graph (see :func:`temporal_base`).
    fraction : float
        Batch size as a share of |E_T|: ``B = max(1, round(fraction * |E_T|))``.
    num_batches : int
        Number of consecutive batches after the base.

    Returns
    -------
    base : Graph
        The base graph, a self-loop on every vertex.
    batches : list of Batch
        ``num_batches`` insertion-only batches, meant to be applied one after
        another to ``base``. Batch ``i`` holds the new edges among temporal
        edges ``[b + i*B, b + (i+1)*B)`` (``b`` = base events), in stream order.
        Once the stream runs out, batches are shorter or empty.
    stats : TemporalStats
        Events read and dropped per batch.
    """
    if fraction <= 0:
        raise ValueError(f"batch fraction must be positive, got {fraction}")
    if num_batches < 1:
        raise ValueError(f"num_batches must be at least 1, got {num_batches}")
    base, base_events = temporal_base(temporal_src, temporal_dst, num_vertices, base_fraction)
    src = np.asarray(temporal_src)
    dst = np.asarray(temporal_dst)
    total = len(src)
    size = max(1, int(round(fraction * total)))
    stop = min(total, base_events + num_batches * size)
    s, d = src[base_events:stop], dst[base_events:stop]
    check_ids("temporal edges", np.concatenate([s, d]), num_vertices)
    keys = edge_keys(s, d, num_vertices)
    which = np.arange(len(keys)) // size  # batch index of every event

    # The first occurrence of each key after the base decides where it is inserted;
    # a later occurrence is a repeat within the same batch or already present after it.
    _, first_pos, inverse = np.unique(keys, return_index=True, return_inverse=True)
    first_batch = which[first_pos][inverse]
    is_first = np.zeros(len(keys), dtype=bool)
    is_first[first_pos] = True
    loop = s == d  # present already: every vertex has its self-loop
    in_base = base.has_edges(s, d) & ~loop
    inserted = is_first & ~in_base & ~loop
    repeated = ~is_first & ~in_base & ~loop & (first_batch == which)
    present = ~loop & ~inserted & ~repeated

    def per_batch(mask):
        return np.bincount(which[mask], minlength=num_batches).astype(np.int64)

    stats = TemporalStats(
        temporal_edges=total,
        base_events=base_events,
        base_edges=base.num_edges,
        batch_size=size,
        events=per_batch(np.ones(len(keys), dtype=bool)),
        inserted=per_batch(inserted),
        dropped_present=per_batch(present),
        dropped_repeated=per_batch(repeated),
        dropped_self_loops=per_batch(loop),
    )
    bounds = np.searchsorted(which[inserted], np.arange(num_batches + 1))
    ins_s, ins_d = s[inserted], d[inserted]
    empty = np.empty(0, dtype=VERTEX_DTYPE)
    batches = [
        Batch(empty, empty, ins_s[bounds[i] : bounds[i + 1]], ins_d[bounds[i] : bounds[i + 1]])
        for i in range(num_batches)
    ]
    return base, batches, stats


# --------------------------------------------------------------------------- random batches


def batch_rng(seed: int, dataset: str, fraction: float, repeat: int) -> np.random.Generator:
    """The random generator of one random batch, a pure function of its configuration.

    The dataset name enters through ``zlib.crc32`` and the fraction through the
    bits of its float64 value, so the stream is the same in every process and
    on every platform (Python's ``hash()`` of a string changes between runs).
    NumPy keeps a Generator's streams stable within a version; a NumPy upgrade
    may change the batches drawn.

    Parameters
    ----------
    seed : int
        The config's ``seed`` (non-negative).
    dataset : str
        Catalog name of the dataset.
    fraction : float
        Batch size as a share of |E|.
    repeat : int
        Index of the batch among the repeats of one fraction.
    """
    fraction_bits = int(np.array(float(fraction), dtype=np.float64).view(np.uint64))
    entropy = [int(seed), zlib.crc32(dataset.encode("utf-8")), fraction_bits, int(repeat)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def random_batch_sizes(num_edges: int, fraction: float, insert_share: float) -> tuple[int, int]:
    """Insertions and deletions of a random batch on a graph of ``num_edges`` edges.

    ``round(insert_share * fraction * num_edges)`` insertions and
    ``round((1 - insert_share) * fraction * num_edges)`` deletions; when both
    round to zero the batch gets one edge, an insertion when ``insert_share >= 0.5``.

    Returns
    -------
    insertions, deletions : int
    """
    if not 0.0 < fraction <= 1.0:  # NaN too
        raise BatchError(f"batch fraction must lie in (0, 1], got {fraction}")
    if not 0.0 <= insert_share <= 1.0:
        raise BatchError(f"insert_share must lie in [0, 1], got {insert_share}")
    size = fraction * num_edges
    insertions = int(round(insert_share * size))
    deletions = int(round((1.0 - insert_share) * size))
    if insertions + deletions == 0:
        if insert_share >= 0.5:
            insertions = 1
        else:
            deletions = 1
    return insertions, deletions


def _is_edge(graph: Graph, keys: np.ndarray) -> np.ndarray:
    """Boolean mask: is each sorted key (see :func:`edge_keys`) an edge of ``graph``.

    On the host a binary search in each key's CSR row that drops settled keys
    after every step (:func:`dynpr.graph.graph.row_lower_bound`): a uniformly drawn
    row is short, and with sorted keys the row reads go forward through memory.
    The streaming pass of :meth:`Graph.has_edges` for many queries reads every
    edge, once per rejection round.
    """
    src, dst = np.divmod(keys, np.int64(graph.num_vertices))
    if on_device(graph.targets):
        return to_host(graph.has_edges(src, dst))
    pos = row_lower_bound(graph.offsets, graph.targets, src, dst)
    found = pos < graph.offsets[src + 1]
    found[found] = graph.targets[pos[found]] == dst[found]
    return found


def _round_candidates(graph: Graph, keys: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Mask over ``keys`` (in draw order): first occurrence, not an edge, not in sorted ``taken``.

    One sort of the round's keys serves all three tests. A uniform pair is
    rarely an edge, taken or repeated, so the rejected keys form a short sorted
    list that the draw-order keys are looked up in; an unsorted search in the
    long list costs ~0.5 us a key (R-MAT scale 22, 4M keys: 2.2 s).
    """
    uniq = unique_sorted(keys)
    bad = _is_edge(graph, uniq)
    if len(taken):
        bad |= contains_sorted(taken, uniq)
    ok = ~contains_sorted(uniq[bad], keys)
    if len(uniq) < len(keys):  # repeats within the round: keep the first occurrence of each
        repeated = np.sort(keys)
        repeated = unique_sorted(repeated[1:][repeated[1:] == repeated[:-1]])
        at = np.flatnonzero(contains_sorted(repeated, keys))
        ok[at[~_first_occurrences(keys[at])]] = False
    return ok


def _first_repeat_round(rounds: list[np.ndarray], n: int) -> int | None:
    """Index of the first round holding a key of an earlier round, None when all keys differ.

    ``rounds`` are sorted key arrays, each without repeats. The key range is
    cut into slices (one sort each, on a thread pool): a repeat lies in one slice.
    """
    total = sum(len(r) for r in rounds)
    if len(rounds) < 2 or total == 0:
        return None
    slices = max(1, min(4 * (os.cpu_count() or 1), total >> 20))
    bounds = np.linspace(0, float(n) * n, slices + 1)
    bounds = np.unique(np.append(np.ceil(bounds[:-1]).astype(np.int64), np.iinfo(np.int64).max))
    cuts = [np.searchsorted(r, bounds) for r in rounds]

    def repeated_keys(b: int) -> np.ndarray:
        part = np.sort(np.concatenate([r[c[b]:c[b + 1]] for r, c in zip(rounds, cuts)]))
        return part[1:][part[1:] == part[:-1]]

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        repeated = np.concatenate(list(pool.map(repeated_keys, range(len(bounds) - 1))))
    if len(repeated) == 0:
        return None
    repeated = np.sort(repeated)
    # a repeated key lies in two or more rounds: the later of its first two is the first bad round
    seen = np.zeros(len(repeated), dtype=bool)
    for index, r in enumerate(rounds):
        hit = contains_sorted(r, repeated)
        if np.any(hit & seen):
            return index
        seen |= hit
    raise AssertionError("a repeated key was not found in two rounds")


def _sample_absent_pairs(graph: Graph, non_loop_edges: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct keys of pairs u != v that are not edges of ``graph``, by rejection in rounds.

    Each round draws pairs, keeps the first occurrence of each that is not an
    edge and not chosen in an earlier round, and takes as many as are still
    needed. Candidates are checked by binary search in their source's CSR row:
    O(count log degree) work, no array over the graph's edges.

    The result is exactly that of checking every round against all earlier
    ones, but the check is deferred: a uniform pair repeats an earlier round's
    pair with probability (chosen pairs) / n^2 (R-MAT scale 25 at fraction 0.1:
    4e-8), so rounds run optimistically, checked only against the rounds
    verified so far, and one sort per key slice at the end finds any repeat.
    On a repeat, the rounds from the first one holding it are drawn again,
    from the generator state saved before it, against the rounds before it:
    the same pairs and the same generator state as the round-by-round check,
    which cost one ``np.isin`` against all chosen keys per round of 2^22
    draws (quadratic: 349 s of random_batch at R-MAT scale 25, fraction 0.1).
    """
    n = graph.num_vertices
    absent_pairs = n * (n - 1) - non_loop_edges
    if count > absent_pairs:
        raise ValueError(f"cannot insert {count} new edges: the graph has only {absent_pairs} absent vertex pairs")
    parts: list[np.ndarray] = []  # accepted keys of each round, in draw order
    states: list[dict] = []  # the generator's state before each round
    verified = 0  # rounds known to share no key with one another
    taken = np.empty(0, dtype=np.int64)  # sorted keys of the verified rounds
    chosen = 0
    while True:
        while chosen < count:
            need = count - chosen
            # Draw enough that one round nearly always suffices: a uniform pair is
            # acceptable with probability about (absent pairs left) / n^2.
            accept = (absent_pairs - chosen) / float(n) ** 2
            draw = min(_MAX_DRAW, int(need / accept * 1.1) + 16)
            states.append(rng.bit_generator.state)
            u, v = rng.integers(0, n, size=(2, draw), dtype=np.int64)
            ok = u != v
            keys = u[ok] * n + v[ok]
            del u, v, ok
            keys = keys[_round_candidates(graph, keys, taken)][:need]
            parts.append(keys)
            chosen += len(keys)
        bad = _first_repeat_round([np.sort(p) for p in parts[verified:]], n)
        if bad is None:
            break
        bad += verified
        rng.bit_generator.state = states[bad]
        del parts[bad:], states[bad:]
        verified = bad
        taken = unique_sorted(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
        chosen = len(taken)
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def _sorted_sample(population: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``np.sort(rng.choice(population, size, replace=False))``, leaving ``rng`` in the same state.

    For ``size > population // 50`` (and ``population > 10000``) NumPy's
    ``Generator.choice`` shuffles the tail of ``arange(population)``: 8 bytes
    per element (8.6 GB for the 1.07 billion edges of R-MAT scale 26) and one
    random memory access per sample. Here its ``size`` swap targets are drawn
    with the same generator calls (``integers`` with the inclusive bounds
    ``population-1, population-2, ...``: NumPy's shuffle draws each with the
    same bounded-integer routine) and the swaps are resolved without the
    array: O(size log size) work in arrays of ``size`` elements. Below that
    share (or from 2^32 elements on) NumPy is called as is; below the share it
    samples with a hash set of ``size`` entries.
    """
    if not (population > 10000 and size > population // 50) or population >= 1 << 32:
        return np.sort(rng.choice(population, size=size, replace=False))
    first = max(population - size, 1)
    steps = population - first
    last = population - 1
    # step k swaps slot i_k = last - k with slot j_k, uniform in [0, i_k]
    j = rng.integers(0, np.arange(last, first - 1, -1, dtype=np.int64), endpoint=True, dtype=np.int64)
    if size == population:
        return np.arange(population, dtype=np.int64)
    # group the steps by target slot, in step order: (j_k, k) as one uint64 key
    # j_k * steps + k, below population^2 < 2^64 (larger populations take NumPy's path)
    span = np.uint64(steps)
    keys = j.astype(np.uint64)
    del j
    keys *= span
    keys += np.arange(steps, dtype=np.uint64)
    keys.sort()
    target = (keys // span).astype(np.int64)
    step = (keys % span).astype(np.int64)
    del keys
    same = np.zeros(steps, dtype=bool)  # the previous step in sorted order wrote the same slot
    np.equal(target[1:], target[:-1], out=same[1:])
    # Step k moves slot i_k's value into slot j_k. That value is i_k itself unless an
    # earlier step k' wrote slot i_k (j_k' = i_k, k' < k): then it is what step k' moved,
    # a chain followed by pointer jumping. Per slot of the tail, the latest such writer.
    writes_tail = (target >= first) & (step < last - target)
    latest = writes_tail.copy()
    latest[:-1] &= ~(writes_tail[1:] & same[1:])
    origin = np.arange(steps, dtype=np.int64)  # the step whose slot i's value step k moves
    origin[last - target[latest]] = step[latest]
    while True:
        jumped = origin[origin]
        if np.array_equal(jumped, origin):
            break
        origin = jumped
    # Slot i_k ends with what slot j_k held before step k: j_k itself, or what the
    # previous writer of slot j_k moved there.
    result = target  # reused: the sample, one value per step
    at = np.flatnonzero(same)
    result[at] = last - origin[step[at - 1]]
    result.sort()
    return result


def random_batch(graph: Graph, fraction: float, insert_share: float, rng: np.random.Generator) -> Batch:
    """A random batch update: uniform absent pairs inserted, uniform existing edges deleted.

    |E| is the number of edges of ``graph`` that are not self-loops: the
    self-loops added on every vertex are not part of the dataset, and the
    batch never deletes one.

    Parameters
    ----------
    graph : Graph
        The graph the batch is applied to (self-loops on every vertex).
    fraction : float
        Batch size as a share of |E|; sizes from :func:`random_batch_sizes`.
    insert_share : float
        Share of insertions (0.8 in the paper).
    rng : numpy.random.Generator
        Source of randomness, e.g. from :func:`batch_rng`.

    Returns
    -------
    Batch
        Insertions: distinct pairs ``u != v`` that are not edges of ``graph``,
        in the order drawn. Deletions: distinct non-self-loop edges of ``graph``
        chosen without replacement, in CSR order.

    Raises
    ------
    ValueError
        If the graph lacks enough absent pairs or non-self-loop edges.

    Notes
    -----
    Work is O(|V| + batch size x log): deletions are drawn as ranks among the
    non-self-loop edges and mapped to CSR positions through the sorted
    positions of the self-loops; insertion candidates are checked by binary
    search in their CSR row. NumPy's ``choice`` without replacement draws a
    permutation of all ranks (8 bytes per edge, transient) once the deletions
    exceed 1/50 of the edges, that is for fraction 0.1.
    """
    n = graph.num_vertices
    loop_pos = to_host(graph.self_loop_positions)
    loop_pos = loop_pos[loop_pos >= 0]  # ascending: rows are in order
    non_loop = graph.num_edges - len(loop_pos)
    insertions, deletions = random_batch_sizes(non_loop, fraction, insert_share)
    if deletions > non_loop:
        raise ValueError(f"cannot delete {deletions} edges: the graph has only {non_loop} non-self-loop edges")
    new = _sample_absent_pairs(graph, non_loop, insertions, rng)
    ins_src, ins_dst = split_keys(new, n)
    ranks = _sorted_sample(non_loop, deletions, rng)
    # the rank-r non-loop edge sits at r plus the number of self-loops before it;
    # loop_pos[j] - j is the rank of the first non-loop edge after the j-th self-loop
    picked = ranks + np.searchsorted(loop_pos - np.arange(len(loop_pos)), ranks, side="right")
    return Batch(to_host(rows_of_positions(graph.offsets, picked)), to_host(graph.targets[picked]), ins_src, ins_dst)
