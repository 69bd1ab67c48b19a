"""dynpr's tolerance against networkx's: what each stopping rule promises of the other.

dynpr stops when the largest change of a rank in one iteration is below ``tolerance`` (an
absolute L-inf norm, :class:`dynpr.pagerank.options.PageRankOptions`); networkx's ``pagerank``
stops when the sum of the changes is below ``N * tol`` (an L1 norm scaled by the number of
vertices N). Since ``max <= sum <= N * max`` for the same change:

* dynpr's ``tolerance = tol`` stops no earlier than networkx would: each dynpr stop meets
  networkx's rule (``sum <= N * max < N * tol``);
* dynpr's ``tolerance = N * tol`` stops no later than networkx would: each networkx stop meets
  dynpr's rule (``max <= sum < N * tol``);
* networkx's ``tol = tolerance / N`` stops no earlier than dynpr would.
"""

from __future__ import annotations

from dynpr.graph.validate import finite_number


def tolerance_from_networkx(tol: float, num_vertices: int, *, at_least_as_strict: bool = True) -> float:
    """The dynpr ``tolerance`` (L-inf) for networkx's ``pagerank(tol=tol)`` (L1 below ``N * tol``).

    Parameters
    ----------
    tol : float
        networkx's tolerance.
    num_vertices : int
        N, the number of vertices of the graph.
    at_least_as_strict : bool
        True (default): a tolerance whose every stop also meets networkx's rule (``tol`` itself: the
        largest change bounds the mean one); False: one that stops no later than networkx would
        (``N * tol``: networkx's sum bounds the largest change).

    Returns
    -------
    float
        The value for :attr:`PageRankOptions.tolerance <dynpr.pagerank.options.PageRankOptions.tolerance>`.

    Raises
    ------
    dynpr.errors.InputError
        For a negative or non-finite ``tol``, or ``num_vertices`` below 1.
    """
    _check(tol, num_vertices, "tol")
    return float(tol) if at_least_as_strict else float(tol) * num_vertices


def tolerance_to_networkx(tolerance: float, num_vertices: int) -> float:
    """networkx's ``tol`` whose every stop also meets dynpr's rule (largest change below ``tolerance``).

    Parameters
    ----------
    tolerance : float
        dynpr's L-inf tolerance.
    num_vertices : int
        N, the number of vertices of the graph.

    Returns
    -------
    float
        ``tolerance / N``: networkx then stops once the changes sum below ``tolerance``, which bounds the largest.

    Raises
    ------
    dynpr.errors.InputError
        For a negative or non-finite ``tolerance``, or ``num_vertices`` below 1.
    """
    _check(tolerance, num_vertices, "tolerance")
    return float(tolerance) / num_vertices


def _check(value: float, num_vertices: int, name: str) -> None:
    finite_number(name, value, low=0)
    finite_number("num_vertices", num_vertices, low=1)
