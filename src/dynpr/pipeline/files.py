"""The batch jobs of the workflow as functions: what ``workflow/scripts/make_*_batches.py`` and
``make_temporal_base.py`` run, so that benchmarks and tests measure the same work
(:mod:`dynpr.pipeline.footprint` models their memory). Each returns the line the job logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynpr.batches import batch_rng, random_batch, temporal_base, temporal_batches, write_batches
from dynpr.io.prepare import load_prepared


def _temporal(graph_path, dataset: str):
    graph, temporal = load_prepared(graph_path)
    if temporal is None:
        raise ValueError(f"{graph_path}: {dataset} has no temporal edges (temporal_src/temporal_dst)")
    return graph, temporal


def random_batch_file(graph_path: str | Path, out_path: str | Path, dataset: str, fraction: float,
                      insert_share: float, repeats: int, seed: int) -> str:
    """Rule ``random_batches``: ``repeats`` 80/20 random batches of a static graph (paper 5.1.4)."""
    graph, _temporal = load_prepared(graph_path)
    edges = graph.num_edges - graph.num_self_loops  # |E| of the batch sizes: self-loops excluded
    batches = [random_batch(graph, fraction, insert_share, batch_rng(seed, dataset, fraction, r))
               for r in range(repeats)]
    write_batches(out_path, batches, made_for=graph, dataset=dataset, experiment="random", fraction=float(fraction),
                  insert_share=float(insert_share), repeats=int(repeats), seed=int(seed), edges=edges)
    return (f"{out_path}: {len(batches)} batches on |E|={edges} non-self-loop edges, "
            f"{'/'.join(str(b.insertions) for b in batches)} insertions, "
            f"{'/'.join(str(b.deletions) for b in batches)} deletions")


def temporal_base_file(graph_path: str | Path, out_path: str | Path, dataset: str, base_fraction: float) -> str:
    """Rule ``temporal_base``: the base graph of the temporal experiment (paper 5.1.4)."""
    graph, (src, dst, _time) = _temporal(graph_path, dataset)
    base, base_events = temporal_base(src, dst, graph.num_vertices, base_fraction)
    base.save(out_path, param_dataset=np.asarray(dataset), param_experiment=np.asarray("temporal"),
              param_base_fraction=np.asarray(float(base_fraction)), param_temporal_edges=np.asarray(len(src)),
              param_base_events=np.asarray(base_events))
    return (f"{out_path}: {base_events} of {len(src)} temporal edges -> {base.num_vertices} vertices, "
            f"{base.num_edges} edges (self-loop on every vertex included)")


def temporal_batch_file(graph_path: str | Path, out_path: str | Path, dataset: str, fraction: float,
                        base_fraction: float, num_batches: int) -> str:
    """Rule ``temporal_batches``: consecutive insertion batches after the temporal base (paper 5.1.4)."""
    graph, (src, dst, _time) = _temporal(graph_path, dataset)
    base, batches, stats = temporal_batches(src, dst, graph.num_vertices, base_fraction, fraction, num_batches)
    write_batches(out_path, batches, made_for=base, dataset=dataset, experiment="temporal", fraction=float(fraction),
                  base_fraction=float(base_fraction), num_batches=int(num_batches), batch_size=stats.batch_size,
                  temporal_edges=stats.temporal_edges, base_events=stats.base_events)
    empty = sum(b.insertions == 0 for b in batches)
    return (f"{out_path}: {len(batches)} batches of B={stats.batch_size} temporal edges; "
            f"read {stats.events.sum()}, inserted {stats.inserted.sum()}, dropped {stats.dropped_present.sum()} "
            f"present, {stats.dropped_repeated.sum()} repeated in their batch, {stats.dropped_self_loops.sum()} "
            f"self-loops; {empty} batches empty; {stats.short_batches} short batches"
            + (" (temporal edges ran out)" if stats.short_batches else ""))
