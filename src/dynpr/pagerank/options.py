"""Options and results shared by every PageRank engine (CPU and GPU)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from dynpr.designs import PARTITIONS
from dynpr.errors import ConvergenceError, InputError
from dynpr.graph.validate import finite_number
from dynpr.pagerank.personalization import check_personalization


@dataclass(frozen=True)
class PageRankOptions:
    """Parameters of every approach; defaults are the paper's (section 5.1.2).

    Attributes
    ----------
    alpha : damping factor.
    tolerance : L-infinity iteration tolerance tau.
    frontier_tolerance : relative rank change above which DF/DF-P expand (tau_f).
    prune_tolerance : relative rank change at or below which DF-P prunes (tau_p).
    max_iterations : iteration cap.
    degree_switch : largest in-degree the ``partitioned`` / ``partitioned_prc`` baseline kernels handle
        thread-per-vertex (the default engine's classes are ``dynpr.designs.CLASS_BOUNDS``).
    partition : GPU work partitioning, one of ``PARTITIONS``.
    variant : GPU kernel design (``dynpr.designs.VARIANTS``); ``None`` = the fastest
        measured ("classes"). The CPU reads only its contributions' dtype (``classes_c32``
        stores float32 ones; the CPU engine is its twin). The pure static designs
        (``pull_*``, ``push_atomic``, ``cusparse``) serve Static and ND only.
    raise_on_max_iterations : raise :class:`ConvergenceError` when a run stops at
        ``max_iterations`` instead of returning it with ``converged=False``.
    personalization : personalized PageRank's teleport weights, as networkx's: a mapping
        ``{original vertex id: weight}`` (absent vertices weigh 0) or an array of one weight per
        vertex, normalised to sum 1 (:mod:`dynpr.pagerank.personalization`); None is the uniform
        ``1/n``. Kept as a read-only copy, and left out of comparisons of options. On the GPU the
        default designs (``classes*``) run it; the others refuse it.
    """

    alpha: float = 0.85
    tolerance: float = 1e-10
    frontier_tolerance: float = 1e-6
    prune_tolerance: float = 1e-6
    max_iterations: int = 500
    degree_switch: int = 64
    partition: str = "in_out"
    variant: str | None = None
    raise_on_max_iterations: bool = False
    personalization: Mapping | np.ndarray | None = field(default=None, compare=False)

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
        # frozen: the checked copy replaces the caller's object
        object.__setattr__(self, "personalization", check_personalization(self.personalization))


@dataclass
class PageRankResult:
    """What every approach returns.

    ``time_ms`` covers partitioning, marking, iterations and convergence
    detection (the paper's section 5.1.5); ``phases`` splits it into ``partition_ms``,
    ``mark_ms`` and ``compute_ms``. ``affected`` counts vertices ever marked
    affected (all vertices for Static and ND). ``variant`` names the GPU
    kernel design that ran (empty on the CPU). ``converged`` is False when the
    run stopped at ``max_iterations`` with the last change still above the
    tolerance (as cuGraph's flag; networkx raises instead, which
    ``PageRankOptions.raise_on_max_iterations`` asks for).
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
    converged: bool = True


def check_converged(result: PageRankResult, options: PageRankOptions) -> None:
    """Raise :class:`ConvergenceError` for a run that did not converge when ``options`` ask for it."""
    if options.raise_on_max_iterations and not result.converged:
        raise ConvergenceError(
            f"{result.approach} on {result.backend} stopped at max_iterations={options.max_iterations} "
            f"before the change met tolerance={options.tolerance:g}", result)
