"""dynpr: PageRank on dynamic graphs (Static, ND, DT, DF, DF-P) on CPUs and GPUs."""

__version__ = "0.1.0"
from dynpr.designs import APPROACHES  # noqa: F401  (the package-level name of the approach codes)


def __getattr__(name):
    # dynpr.DynamicPageRank, imported on first use (it needs the engines, which import dynpr)
    if name == "DynamicPageRank":
        from dynpr.pagerank.dynamic import DynamicPageRank

        return DynamicPageRank
    raise AttributeError(f"module 'dynpr' has no attribute {name!r}")
