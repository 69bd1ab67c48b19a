"""Claims 5.2-gunrock and 5.2-hornet measured from the peers tables (``results/peers/*.csv``, rule ``peers``).

The paper's Static PageRank is 5.9x faster than Gunrock's and 31x faster than Hornet's (5.2,
Fig. 2(b)). Where the peer ran, its row of ``results/claims.csv`` becomes the ratio of the peer's
Static runtime to dynpr's on the same prepared graphs (the per-graph median over repeats, the
geometric mean across graphs, with a bootstrap interval over graphs), the per-iteration ratio and
the settings the program fixed in ``basis``. Measured with dynpr on the CPU, the row shows the
number with the verdict ``not comparable`` (a GPU speed claim); where the peer did not run the
row is left as :func:`dynpr.evaluation.claims.evaluate` wrote it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dynpr.evaluation.claims import counts, ratio, speedup_basis
from dynpr.evaluation.verdicts import MIN_GRAPHS, enough_graphs, run_spread, shown, speedup_verdict

#: Peer kind -> its claim's id.
PEER_CLAIMS = {"gunrock": "5.2-gunrock", "hornet": "5.2-hornet"}
NAMES = {"gunrock": "Gunrock", "hornet": "Hornet"}


def _as_batches(rows: pd.DataFrame) -> pd.DataFrame:
    """Peers rows in the summary's shape (each graph one batch, ``peer`` as the approach)."""
    return rows.assign(approach=rows["peer"].astype(str), batch_fraction=0.0, batch_index=0)


def peer_claim(claim: pd.Series, peers: pd.DataFrame, kind: str) -> pd.Series:
    """Claim row ``claim`` (of ``results/claims.csv``) measured from the peers table, or unchanged when
    ``peer`` ``kind`` and dynpr did not both run on some graph."""
    rows = peers[peers["peer"].isin([kind, "dynpr"])]
    both = rows.groupby("dataset")["peer"].nunique() == 2
    rows = rows[rows["dataset"].isin(both[both].index)]
    if rows.empty:
        return claim
    batches = _as_batches(rows)
    est, ci, graphs, _ = ratio(batches, "approach", kind, "dynpr")
    peer_rows, ours = rows[rows["peer"] == kind], rows[rows["peer"] == "dynpr"]
    per_iteration = (ratio(batches, "approach", kind, "dynpr", value="ms_per_iteration")[0]
                     if peer_rows["ms_per_iteration"].notna().all() else np.nan)
    per_iteration_text = (f"{per_iteration:.3g}x" if np.isfinite(per_iteration)
                          else f"not measured (no iteration count: peers.{kind}.iterations_program)")
    paper = float(claim["paper_value"])
    spread = run_spread(batches, "approach", [kind, "dynpr"])
    backend = "+".join(sorted(set(ours["backend"].astype(str))))
    verdict, short = enough_graphs(speedup_verdict(*ci, paper, spread), len(graphs), MIN_GRAPHS)
    if backend != "gpu" and verdict != "not measured":
        verdict = "not comparable"  # a GPU speed claim; the number is still shown
    converged = int(peer_rows["converged"].astype(bool).sum())
    settings = "; ".join(sorted(set(peer_rows["settings"].dropna().astype(str))))
    basis = (f"{NAMES[kind]} over dynpr Static runtime on the same prepared graphs (results/peers/), per graph the "
             f"median over repeats, geometric mean across graphs, interval over graphs; per iteration "
             f"{per_iteration_text}; dynpr on {backend}; {NAMES[kind]}: {settings}; it met tau in {converged} of "
             f"{len(peer_rows)} runs; {speedup_basis(paper, spread)}" + (f"; {short}" if short else ""))
    devices = "; ".join(sorted(set(rows["device"].fillna("").astype(str)) - {""}))
    return pd.Series({
        **claim.to_dict(), "measured": shown(est), "ci_low": shown(ci[0]), "ci_high": shown(ci[1]), **counts(batches),
        "backend": backend, "device": devices, "graphs": " ".join(map(str, graphs)), "fractions": "",
        "verdict": verdict, "basis": basis})


def with_peer_claims(claims: pd.DataFrame, peers: pd.DataFrame) -> pd.DataFrame:
    """``claims`` with rows 5.2-gunrock and 5.2-hornet measured where their peer ran (:func:`peer_claim`)."""
    out = claims.copy()
    for kind, claim_id in PEER_CLAIMS.items():
        at = out.index[out["claim_id"] == claim_id]
        for i in at:
            out.loc[i] = peer_claim(out.loc[i], peers, kind)[out.columns].to_numpy()
    return out
