"""R-MAT generator: Graph500 quadrant probabilities, determinism, cleanliness, the counter-based
stream's host twin and (with a device) the GPU generator against it."""

from __future__ import annotations

import numpy as np
import pytest

import dynpr.generate.rmat as rmat_mod
from dynpr.backend import gpu_available
from dynpr.graph.graph import Graph
from dynpr.gpu.rmat import plan_groups, rmat_device_bytes
from dynpr.generate.rmat import GRAPH500_ABC, rmat_edges, rmat_graph, rmat_raw_edges


def test_quadrant_probabilities_at_every_level():
    scale, m = 6, 400_000
    src, dst = rmat_raw_edges(scale, m, np.random.default_rng(0))
    a, b, c = GRAPH500_ABC
    expected = np.array([a, b, c, 1 - a - b - c])
    for level in range(scale):
        row, col = (src >> level) & 1, (dst >> level) & 1
        observed = np.bincount(2 * row + col, minlength=4) / m  # 0=a (top-left), 1=b, 2=c, 3=d
        # binomial standard error is < 0.0008 here; 0.004 is a 5-sigma bound
        np.testing.assert_allclose(observed, expected, atol=0.004)


def test_edges_are_unique_without_self_loops():
    scale = 10
    src, dst = rmat_edges(scale, 16, seed=5)
    assert src.dtype == np.int32 and dst.dtype == np.int32
    assert len(src) > 8 * 2**scale  # dedup removes some, not most
    assert (src != dst).all()
    assert src.min() >= 0 and max(src.max(), dst.max()) < 2**scale
    keys = src.astype(np.int64) * 2**scale + dst
    assert len(np.unique(keys)) == len(keys)
    assert (np.diff(keys) > 0).all()


def test_seeded_and_permuted():
    s1, d1 = rmat_edges(9, 8, seed=1)
    s2, d2 = rmat_edges(9, 8, seed=1)
    s3, _ = rmat_edges(9, 8, seed=2)
    assert np.array_equal(s1, s2) and np.array_equal(d1, d2)
    assert len(s1) != len(s3) or not np.array_equal(s1, s3)
    # without the permutation vertex 0 (the all-"a" quadrant path) would be the hub
    assert np.bincount(s1, minlength=2**9).argmax() != 0


def test_skewed_degrees():
    src, _ = rmat_edges(12, 16, seed=3)
    degree = np.bincount(src, minlength=2**12)
    assert degree.max() > 20 * degree.mean()  # power-law-like, unlike a uniform random graph


@pytest.mark.parametrize("kwargs", [dict(scale=0), dict(scale=31), dict(scale=4, abc=(0.5, 0.3, 0.3))])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        rmat_edges(**kwargs)


# sha256 of rmat_graph(...) (CSR with self-loops, Graph.sha256) computed on commit 84a56a7,
# before the counter-based stream: graphs of at most CHUNK_EDGES drawn edges must not change.
SMALL_GRAPHS = {
    (8, 8, 2): (1768, "9046bdbd6fbbc8737a6643fd249ca410e46245497e673c05c3f690fb23087925"),
    (10, 16, 5): (13166, "baceea983893879de641939351a6b4112a406dbc886ed935e6ac6ab472acc207"),
    (12, 16, 3): (57573, "895cb74cde5156e9007689125e1c09f707eaf0d1c5985b535903ceb9428b38f2"),
    (14, 16, 7): (244721, "8eed36235ac54ac3f128a918a06d37c0de6877bf6061b274267a4948bd7e297a"),
}


@pytest.mark.parametrize("args", sorted(SMALL_GRAPHS))
def test_numpy_stream_graphs_are_unchanged(args):
    graph = rmat_graph(*args, backend="cpu")
    assert (graph.num_edges, graph.sha256) == SMALL_GRAPHS[args]


MASK = (1 << 64) - 1


def _word(base, i):
    """Word i of a stream, on Python integers (the module docstring's definition)."""
    return rmat_mod.mix64((base + i * rmat_mod.GAMMA) & MASK)


def _reference_edge(scale, seed, e, thresholds):
    base, words = rmat_mod.stream_base(seed, rmat_mod.EDGE_STREAM), (scale + 1) // 2
    src = dst = 0
    for level in range(scale):
        h = _word(base, e * words + level // 2)
        u = h >> 32 if level % 2 == 0 else h & 0xFFFFFFFF
        quadrant = sum(u >= t for t in thresholds)  # 0 = a, 1 = b, 2 = c, 3 = d
        src |= (quadrant >> 1) << level
        dst |= (quadrant & 1) << level
    return src, dst


def _reference_permutation(scale, seed, v):
    base, low = rmat_mod.stream_base(seed, rmat_mod.PERM_STREAM), scale // 2
    for r in range(rmat_mod.FEISTEL_ROUNDS):
        high = scale - low
        lo, hi = v & ((1 << low) - 1), v >> low
        v = (lo << high) | ((hi ^ _word(base, (r << 32) + lo)) & ((1 << high) - 1))
        low = high
    return v


@pytest.mark.parametrize("scale, seed", [(1, 0), (6, 3), (11, 2**64 - 1), (30, 12345)])
def test_counter_stream_is_the_documented_integers(scale, seed):
    thresholds = rmat_mod.quadrant_thresholds(GRAPH500_ABC)
    first = 2**33 - 5  # counters beyond 2**32 (the kernels take 64-bit edge indices)
    src, dst = rmat_mod.rmat_counter_edges(scale, first, 40, seed)
    assert [(int(s), int(d)) for s, d in zip(src, dst)] == [
        _reference_edge(scale, seed, first + i, thresholds) for i in range(40)]
    vertices = np.unique(np.r_[0, 1 << scale - 1, (1 << scale) - 1, src, dst]).astype(np.uint64)
    got = rmat_mod._feistel(vertices, scale, rmat_mod.stream_base(seed, rmat_mod.PERM_STREAM))
    assert got.tolist() == [_reference_permutation(scale, seed, int(v)) for v in vertices]


@pytest.mark.parametrize("scale", [1, 2, 3, 8, 13])
def test_vertex_permutation_is_a_bijection(scale):
    for seed in range(3):
        perm = rmat_mod.vertex_permutation(scale, seed, threads=2)
        assert perm.dtype == np.int32 and np.array_equal(np.sort(perm), np.arange(1 << scale))
    if scale >= 8:
        assert not np.array_equal(perm, np.arange(1 << scale))
        assert not np.array_equal(perm, rmat_mod.vertex_permutation(scale, 0))


def test_quadrant_thresholds_are_the_cumulative_probabilities():
    a, b, c = GRAPH500_ABC
    t = rmat_mod.quadrant_thresholds(GRAPH500_ABC)
    assert t == (int(a * 2**32), int((a + b) * 2**32), int((a + b + c) * 2**32))
    assert 0 < t[0] < t[1] < t[2] < 2**32
    assert rmat_mod.quadrant_thresholds((0.0, 0.0, 1 - 2**-53))[2] == 2**32 - 1


def _within_binomial(count, trials, p, sigmas=5.0):
    """Is a binomial count within ``sigmas`` standard deviations of its mean?"""
    return abs(count - trials * p) <= sigmas * np.sqrt(trials * p * (1 - p))


def test_counter_stream_quadrants_and_degree_classes_follow_the_closed_forms():
    scale, m = 10, 1 << 19
    a, b, c = GRAPH500_ABC
    d = 1 - a - b - c
    src, dst = rmat_mod.rmat_counter_edges(scale, 0, m, seed=9)
    for level in range(scale):  # the joint quadrant frequencies of every level
        quadrants = np.bincount(2 * ((src >> level) & 1) + ((dst >> level) & 1), minlength=4)
        for count, p in zip(quadrants, (a, b, c, d)):
            assert _within_binomial(count, m, p), (level, quadrants)
    # the share of edges whose source's top bit is 1 is c+d
    assert _within_binomial(np.count_nonzero(src >> (scale - 1)), m, c + d)
    # degree classes: an edge's source has k one-bits with probability Binomial(scale, c+d)(k)
    # (so raw vertex u's expected out-degree is m (a+b)^(scale-k) (c+d)^k), and its target
    # Binomial(scale, b+d)(k)
    from math import comb

    for ids, p in ((src, c + d), (dst, b + d)):
        ones = np.unpackbits(ids.astype(">u4").view(np.uint8).reshape(-1, 4), axis=1).sum(axis=1)
        per_class = np.bincount(ones, minlength=scale + 1)
        for k in range(scale + 1):
            assert _within_binomial(per_class[k], m, comb(scale, k) * p**k * (1 - p) ** (scale - k)), (k, per_class)


def _counter_reference(scale, edge_factor, seed):
    """A counter-stream graph from the documented stream, drawn and deduplicated in one piece."""
    n = 1 << scale
    src, dst = rmat_mod.rmat_counter_edges(scale, 0, edge_factor * n, seed)
    perm = rmat_mod.vertex_permutation(scale, seed)
    src, dst = perm[src], perm[dst]
    keep = src != dst
    return Graph.from_edges(src[keep], dst[keep], n)


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Graphs above 1000 drawn edges from the counter stream, hashed in blocks of 97 edges."""
    monkeypatch.setattr(rmat_mod, "CHUNK_EDGES", 1000)
    monkeypatch.setattr(rmat_mod, "_BUCKETS", 5)
    monkeypatch.setattr(rmat_mod, "_BLOCK", 97)


@pytest.mark.parametrize("threads, chunk_edges", [(1, None), (3, None), (2, 777), (3, 4096), (1, 1 << 20)])
def test_counter_graph_is_the_documented_stream_for_any_threads_and_chunks(tiny_chunks, threads, chunk_edges):
    want = _counter_reference(9, 16, 4)
    got = rmat_graph(9, 16, seed=4, threads=threads, chunk_edges=chunk_edges, backend="cpu")
    for name in ("offsets", "targets", "in_offsets", "sources"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert got.num_edges > 6000  # most of the 8192 drawn edges survive


def test_counter_graph_hub_is_the_permuted_all_a_vertex(tiny_chunks):
    scale, seed = 12, 6
    graph = rmat_graph(scale, 16, seed=seed, backend="cpu", self_loops=False)
    # raw vertex 0 expects m (a+b)^scale = 245 drawn out-edges, raw vertices with one bit
    # set a third of that: after the permutation the hub is perm[0]
    hub = int(np.argmax(np.diff(graph.offsets)))
    assert hub == rmat_mod.vertex_permutation(scale, seed)[0]
    degree = np.diff(graph.offsets)
    assert degree.max() > 20 * degree.mean()


def test_which_stream_and_backend():
    assert not rmat_mod.counter_stream(22, 16) and rmat_mod.counter_stream(23, 16)
    assert rmat_mod.counter_stream(22, 17) and not rmat_mod.counter_stream(26, 1)
    assert rmat_mod.generation_backend(26, 16, "cpu") == "cpu"
    assert rmat_mod.generation_backend(20, 16, "auto") == "cpu"  # the NumPy stream is host only
    with pytest.raises(ValueError, match="backend must be one of"):
        rmat_graph(4, backend="cuda")
    with pytest.raises(ValueError, match="seed -1 out of range"):
        rmat_graph(4, seed=-1)
    with pytest.raises(ValueError, match="chunk_edges must be >= 1"):
        rmat_graph(4, chunk_edges=0)


@pytest.mark.skipif(gpu_available(), reason="checks the refusal without a device")
def test_gpu_generation_without_a_device_is_refused(tiny_chunks):
    from dynpr.errors import NoGpuError

    assert rmat_mod.generation_backend(26, 16, "auto") == "cpu"
    for kwargs in (dict(backend="gpu"), dict(resident=True)):
        with pytest.raises(NoGpuError):
            rmat_graph(9, 16, **kwargs)


def test_device_groups_cover_every_row_within_the_chunk():
    counts = np.array([5, 0, 7, 30, 1, 1, 1])
    assert plan_groups(counts, 4, 20, True) == [(0, 8, 5), (8, 12, 7), (12, 16, 30), (16, 28, 3)]
    assert plan_groups(counts, 4, 20, False) == [(0, 12, 12), (12, 16, 30), (16, 28, 3)]
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 1000, 2048)
    groups = plan_groups(counts, 8, 5000, True)
    assert groups[0][0] == 0 and groups[-1][1] == 8 * 2048
    assert all(g[1] == h[0] for g, h in zip(groups, groups[1:]))
    assert sum(d for _, _, d in groups) == counts.sum()
    assert all(d + hi - lo <= 5000 for lo, hi, d in groups)


def test_device_model_fits_paper_scale_on_an_80_gb_gpu():
    n = 1 << 26
    largest_group = rmat_mod.DEVICE_CHUNK_EDGES + n // 2048  # a group plus one bucket's self-loops
    for edge_factor, resident_gib in ((16, 19), (32, 27)):
        drawn = edge_factor * n
        resident = rmat_device_bytes(n, drawn, largest_group, n // 8, resident=True)
        streamed = rmat_device_bytes(n, drawn, largest_group, n // 8, resident=False)
        assert streamed < 9 * 2**30 < resident <= resident_gib * 2**30 < 70 * 2**30
        # the resident graph itself (both CSRs) is part of the model
        assert resident > 16 * (n + 1) + 8 * (drawn + n)


needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("scale, edge_factor, chunk_edges", [
    (3, 512, 700),  # 8 vertices: nearly every draw a repeat, buckets of one vertex
    (9, 16, 1000),
    (12, 8, 5000),
    (13, 16, 40000),
    (14, 16, None),  # one group per direction
])
@pytest.mark.parametrize("self_loops", [True, False])
@pytest.mark.usefixtures("tiny_chunks")
def test_device_graph_equals_the_host_twin(scale, edge_factor, chunk_edges, self_loops):
    host = rmat_graph(scale, edge_factor, seed=11, backend="cpu", self_loops=self_loops, chunk_edges=chunk_edges)
    device = rmat_graph(scale, edge_factor, seed=11, backend="gpu", self_loops=self_loops, chunk_edges=chunk_edges)
    resident = rmat_graph(scale, edge_factor, seed=11, backend="gpu", self_loops=self_loops,
                          chunk_edges=chunk_edges, resident=True)
    assert type(resident.targets).__module__.startswith("cupy")
    for name in ("offsets", "targets", "in_offsets", "sources"):
        want = getattr(host, name)
        got = getattr(device, name)
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and np.array_equal(got, want), name
        assert np.array_equal(getattr(resident, name).get(), want), name


@pytest.mark.gpu
@needs_gpu
def test_auto_generates_counter_graphs_on_the_gpu_and_small_ones_on_the_host(tiny_chunks):
    assert rmat_mod.generation_backend(9, 16, "auto") == "gpu"
    assert rmat_mod.generation_backend(4, 16, "gpu") == "cpu"  # 256 drawn edges: the NumPy stream
    small = rmat_graph(4, 16, seed=3, backend="gpu", resident=True)
    assert type(small.targets).__module__.startswith("cupy")
    assert np.array_equal(small.targets.get(), rmat_graph(4, 16, seed=3, backend="cpu").targets)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("resident", [False, True])
def test_device_fits_check_is_one_line_before_allocating(tiny_chunks, monkeypatch, resident):
    import cupy

    import dynpr.gpu.memory as memory_mod

    monkeypatch.setattr(memory_mod, "free_device_bytes", lambda: 1 << 20)
    pool = cupy.get_default_memory_pool()
    in_use = pool.used_bytes()  # arrays other tests keep (cached device graphs) stay put
    with pytest.raises(MemoryError, match=r"^R-MAT scale 12 edge factor 16 needs [\d.]+ GiB on the GPU, device has "
                                          r"0\.00 GiB free \(\d+ bytes \+ \d+ reserved > 1048576 bytes\): pass a "
                                          r"smaller chunk_edges than 5000, use backend='cpu' or a GPU with more "
                                          r"memory$") as err:
        rmat_graph(12, 16, backend="gpu", chunk_edges=5000, resident=resident)
    assert "\n" not in str(err.value)
    assert pool.used_bytes() == in_use  # nothing graph-sized was allocated (the histogram is freed)


# kernels/rmat.cu's device code compiled by the host's C++ compiler, CUDA built-ins stubbed for
# one thread (a one-lane warp, so the ballot is the lane's own predicate): checks the kernels'
# integers against the NumPy twin where no GPU is at hand.
_HOST_HARNESS = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__
#define __grid_constant__
struct Dim { unsigned x; };
static Dim threadIdx{0}, blockIdx{0}, blockDim{1}, gridDim{1};
typedef unsigned long long ull;
static void __syncthreads() {}
static ull atomicAdd(ull* p, ull v) { ull o = *p; *p += v; return o; }
static unsigned __ballot_sync(unsigned, bool pred) { return pred ? 1u : 0u; }
static ull __shfl_sync(unsigned, ull v, int) { return v; }
static int __ffs(unsigned x) { return __builtin_ffs(x); }
static int __popc(unsigned x) { return __builtin_popcount(x); }
#include "rmat.cu"
ull hist[4096];
int main(int, char** argv) {
  int scale = atoi(argv[1]), by_target = atoi(argv[9]), shift = atoi(argv[12]), buckets = atoi(argv[13]);
  ull eb = strtoull(argv[2], 0, 10), pb = strtoull(argv[3], 0, 10);
  unsigned t[3] = {(unsigned)strtoul(argv[4], 0, 10), (unsigned)strtoul(argv[5], 0, 10),
                   (unsigned)strtoul(argv[6], 0, 10)};
  long long count = atoll(argv[7]);
  int rounds = atoi(argv[8]);
  unsigned lo = strtoul(argv[10], 0, 10), hi = strtoul(argv[11], 0, 10);
  std::vector<long long> keys(count);
  std::vector<ull> counts(2 * buckets);
  ull kept = 0;
  const RmatStream s{count, eb, pb, scale, rounds, t[0], t[1], t[2]};
  rmat_extract(s, by_target, lo, hi, keys.data(), &kept);
  rmat_histogram(s, shift, buckets, counts.data(), counts.data() + buckets);
  for (ull i = 0; i < kept; ++i) printf("%lld ", keys[i]);
  printf("\n");
  for (int i = 0; i < 2 * buckets; ++i) printf("%llu ", counts[i]);
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def kernel_on_the_host(tmp_path_factory):
    import shutil
    import subprocess

    from dynpr.gpu.loader import kernel_dir

    compiler = shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("needs a C++ compiler")
    folder = tmp_path_factory.mktemp("rmat_cu")
    (folder / "harness.cpp").write_text(_HOST_HARNESS)
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{kernel_dir()}", "-o", str(folder / "harness"),
                    str(folder / "harness.cpp")], check=True, capture_output=True)
    return folder / "harness"


@pytest.mark.parametrize("scale, seed, edges, shift, by_target, rows", [
    (3, 1, 3000, 0, 0, (1, 4)),
    (9, 4, 8192, 2, 1, (100, 300)),
    (12, 2**64 - 1, 20000, 1, 0, (0, 4096)),
])
def test_kernel_source_draws_the_twins_edges(kernel_on_the_host, scale, seed, edges, shift, by_target, rows):
    import subprocess

    n, buckets = 1 << scale, (1 << scale) >> shift
    args = [scale, rmat_mod.stream_base(seed, rmat_mod.EDGE_STREAM), rmat_mod.stream_base(seed, rmat_mod.PERM_STREAM),
            *rmat_mod.quadrant_thresholds(), edges, rmat_mod.FEISTEL_ROUNDS, by_target, *rows, shift, buckets]
    keys, counts = subprocess.run([str(kernel_on_the_host), *map(str, args)], check=True, capture_output=True,
                                  text=True).stdout.splitlines()
    src, dst = rmat_mod.rmat_counter_edges(scale, 0, edges, seed)
    perm = rmat_mod.vertex_permutation(scale, seed).astype(np.int64)
    src, dst = perm[src], perm[dst]
    keep = src != dst
    src, dst = src[keep], dst[keep]
    row, col = (dst, src) if by_target else (src, dst)
    inside = (row >= rows[0]) & (row < rows[1])
    assert np.array_equal(np.array(keys.split(), dtype=np.int64), row[inside] * n + col[inside])
    assert np.count_nonzero(inside) > 0
    counts = np.array(counts.split(), dtype=np.int64)
    assert np.array_equal(counts, np.r_[np.bincount(src >> shift, minlength=buckets),
                                        np.bincount(dst >> shift, minlength=buckets)])
