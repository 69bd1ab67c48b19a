"""dynpr: PageRank on dynamic graphs (Static, ND, DT, DF, DF-P) on CPUs and GPUs."""

__version__ = "0.1.0"
APPROACHES = ("static", "nd", "dt", "df", "dfp")
