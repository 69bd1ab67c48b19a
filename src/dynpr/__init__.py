"""dynpr: PageRank on dynamic graphs (Static, ND, DT, DF, DF-P) on CPUs and GPUs."""

__version__ = "0.1.0"
from dynpr.designs import APPROACHES  # noqa: F401  (the package-level name of the approach codes)
