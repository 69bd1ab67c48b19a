"""The R-MAT counter-based stream that the host generator (:mod:`dynpr.generate.rmat`) and the GPU's
(:mod:`dynpr.gpu.rmat`, ``kernels/rmat.cu``) share: its keys, words and quadrant thresholds.

Every random number is a pure function of (seed, edge index, level), so chunks, threads and
the device give the same graph. Word ``i`` of the stream keyed ``k`` is SplitMix64's output,
``mix64(k + (i+1)*GAMMA)`` mod 2**64; see :mod:`dynpr.generate.rmat` for how edges read it.
"""

from __future__ import annotations

#: Graph500 quadrant probabilities (d = 1 - a - b - c = 0.05)
GRAPH500_ABC = (0.57, 0.19, 0.19)
#: Rounds of the Feistel network of :func:`dynpr.generate.rmat.vertex_permutation` (4: a pseudo-random permutation).
FEISTEL_ROUNDS = 4
#: SplitMix64's increment (2**64 over the golden ratio, odd) and its finalizer's multipliers.
GAMMA = 0x9E3779B97F4A7C15
MIX1, MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
MASK64 = (1 << 64) - 1
#: Stream tags: the edges' stream and the permutation's have keys derived from the seed apart.
EDGE_STREAM, PERM_STREAM = 1, 2


def mix64(x: int) -> int:
    """SplitMix64's finalizer of a 64-bit integer (a bijection of ``[0, 2**64)``)."""
    x &= MASK64
    x = ((x ^ (x >> 30)) * MIX1) & MASK64
    x = ((x ^ (x >> 27)) * MIX2) & MASK64
    return x ^ (x >> 31)


def stream_base(seed: int, stream: int) -> int:
    """``k + GAMMA`` for the key ``k = mix64(mix64(seed) + stream*GAMMA)`` of a stream:
    word ``i`` of the stream is ``mix64(base + i*GAMMA)``."""
    key = mix64((mix64(seed) + stream * GAMMA) & MASK64)
    return (key + GAMMA) & MASK64


def quadrant_thresholds(abc: tuple[float, float, float] = GRAPH500_ABC) -> tuple[int, int, int]:
    """Integer thresholds ``floor(p * 2**32)`` of the cumulative probabilities a, a+b, a+b+c.

    A 32-bit uniform ``u`` picks quadrant ``(u >= T_a) + (u >= T_ab) + (u >= T_abc)``
    (0 = a, 1 = b, 2 = c, 3 = d). Computed once in Python and passed to the kernels,
    so host and device compare the same integers. Each is below ``2**32`` as a+b+c < 1.
    """
    a, b, c = abc
    return tuple(int(p * 2.0**32) for p in (a, a + b, a + b + c))
