"""dynpr: PageRank on dynamic graphs (Static, ND, DT, DF, DF-P) on CPUs and GPUs."""

__version__ = "0.1.0"
from dynpr.designs import APPROACHES  # noqa: F401  (the package-level name of the approach codes)


def __getattr__(name):
    # the user-facing functions, imported on first use (they need the engines, which import dynpr)
    if name == "DynamicPageRank":
        from dynpr.pagerank.dynamic import DynamicPageRank

        return DynamicPageRank
    if name == "pagerank_file":
        from dynpr.pagerank.from_file import pagerank_file

        return pagerank_file
    if name in ("tolerance_from_networkx", "tolerance_to_networkx"):
        from dynpr.pagerank import tolerances

        return getattr(tolerances, name)
    if name == "EdgeListOptions":
        from dynpr.io.edge_lists import EdgeListOptions

        return EdgeListOptions
    raise AttributeError(f"module 'dynpr' has no attribute {name!r}")
