"""Options and results shared by every PageRank engine (CPU and GPU)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynpr.errors import InputError
from dynpr.validate import finite_number

PARTITIONS = ("none", "in", "in_out")  # seed 003 Fig. 1: don't partition / partition G' / partition G, G'


@dataclass(frozen=True)
class PageRankOptions:
    """Parameters of every approach; defaults are the paper's (seed 003, 5.1.2).

    Attributes
    ----------
    alpha : damping factor.
    tolerance : L-infinity iteration tolerance tau.
    frontier_tolerance : relative rank change above which DF/DF-P expand (tau_f).
    prune_tolerance : relative rank change at or below which DF-P prunes (tau_p).
    max_iterations : iteration cap.
    degree_switch : largest degree handled thread-per-vertex on the GPU.
    partition : GPU work partitioning, one of ``PARTITIONS``.
    variant : GPU kernel design (``dynpr.gpu.VARIANTS``); ``None`` = the fastest
        measured ("classes"). Ignored on the CPU. The pure static designs
        (``pull_*``, ``push_atomic``, ``cusparse``) serve Static and ND only.
    """

    alpha: float = 0.85
    tolerance: float = 1e-10
    frontier_tolerance: float = 1e-6
    prune_tolerance: float = 1e-6
    max_iterations: int = 500
    degree_switch: int = 64
    partition: str = "in_out"
    variant: str | None = None

    def __post_init__(self):
        # tolerances must be finite: tolerance=inf would stop after one iteration and look converged
        finite_number("alpha", self.alpha, low=0, high=1, low_open=True, high_open=True)
        for name in ("tolerance", "frontier_tolerance", "prune_tolerance"):
            finite_number(name, getattr(self, name), low=0)
        if isinstance(self.max_iterations, bool) or not isinstance(self.max_iterations, (int, np.integer)) \
                or self.max_iterations < 1:
            raise InputError(f"max_iterations: must be an integer of at least 1, got {self.max_iterations!r}")
        if self.partition not in PARTITIONS:
            raise InputError(f"partition: must be one of {PARTITIONS}, got {self.partition!r}")


@dataclass
class PageRankResult:
    """What every approach returns.

    ``time_ms`` covers partitioning, marking, iterations and convergence
    detection (seed 003, 5.1.5); ``phases`` splits it into ``partition_ms``,
    ``mark_ms`` and ``compute_ms``. ``affected`` counts vertices ever marked
    affected (all vertices for Static and ND). ``variant`` names the GPU
    kernel design that ran (empty on the CPU).
    """

    ranks: np.ndarray
    iterations: int
    time_ms: float
    approach: str
    backend: str
    device: str
    affected: int
    phases: dict[str, float] = field(default_factory=dict)
    variant: str = ""
