"""GPU engines (CuPy + CUDA C++ from ``kernels/``): PageRank and Kahn.

Importing this package needs no CuPy; the engines import it on first use and
fail with a one-line error when CuPy or a device is missing. The default
PageRank engine is :mod:`dynpr.gpu.pagerank` (kernels ``kernels/pagerank.cu``);
the designs it is measured against are :mod:`dynpr.gpu.baselines`
(``kernels/baselines.cu``), all declared in :data:`dynpr.designs.VARIANTS`.
"""

from dynpr.designs import VARIANTS as _DECLARED

#: Kernel designs selectable by ``PageRankOptions.variant`` (None = "classes").
VARIANTS = tuple(_DECLARED)
