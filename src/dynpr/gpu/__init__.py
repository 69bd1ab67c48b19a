"""GPU engines (CuPy + CUDA C++ from ``kernels/``): PageRank and Kahn.

Importing this package needs no CuPy; the engines import it on first use and
fail with a one-line error when CuPy or a device is missing.
"""

# Static kernel designs selectable by PageRankOptions.variant (None = the
# default); each names an entry of dynpr.gpu.pagerank.RANK_STEPS.
VARIANTS = ("partitioned",)
