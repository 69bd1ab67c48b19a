"""GPU engines (CuPy + CUDA C++ from ``kernels/``): PageRank and Kahn.

Importing this package needs no CuPy; the engines import it on first use and
fail with a one-line error when CuPy or a device is missing.
"""

# Kernel designs selectable by PageRankOptions.variant (None = "classes", the
# default): "classes" (degree classes thread/8 lanes/warp/block, precomputed
# contributions, device-side convergence, CUDA-graph replay) serves every
# approach, as do "classes_sync" (the same, one host read per iteration),
# "classes_unfused" (the same classes as one launch each, plus separate
# finish/clear/expand launches, one host read per iteration),
# "partitioned" (seed 003's thread+block baseline) and "partitioned_prc" (the
# baseline's classes with precomputed contributions, seed 001 II). Static and
# ND only: "pull_thread" (seed 001 I / seed 000 coalesced), "pull_warp",
# "pull_block", "push_atomic" (seed 000 naive) and "cusparse" (cupyx SpMV).
VARIANTS = ("classes", "classes_sync", "classes_unfused", "partitioned", "partitioned_prc", "pull_thread", "pull_warp", "pull_block",
            "push_atomic", "cusparse")
