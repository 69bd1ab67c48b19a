"""The batch jobs of the workflow as functions: what ``workflow/scripts/make_random_batches.py`` and
``make_temporal_batches.py`` run, so that benchmarks and tests measure the same work
(:mod:`dynpr.pipeline.footprint` models their memory). One job makes every batch file of a dataset: the
graph is loaded and checked once, not once per fraction. Each logs a line per file written."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from dynpr.batches import batch_rng, random_batch, temporal_base, temporal_batches, write_batches
from dynpr.io.prepare import load_prepared
from dynpr.pipeline.jobs import Log, no_lap, no_log

def random_batch_files(graph_path: str | Path, out_paths: Mapping[float, str | Path], dataset: str,
                       insert_share: float, repeats: int, seed: int, log: Log = no_log, lap: Log = no_lap) -> None:
    """Rule ``random_batches``: for each fraction of ``out_paths`` (fraction -> file) ``repeats`` 80/20
    random batches of a static graph (paper 5.1.4); ``lap`` books load, work and writing
    (:meth:`dynpr.pipeline.jobs.JobLog.lap`)."""
    graph, _temporal = load_prepared(graph_path)
    lap("load and checks")
    edges = graph.num_edges - graph.num_self_loops  # |E| of the batch sizes: self-loops excluded
    for fraction, out_path in out_paths.items():
        batches = [random_batch(graph, fraction, insert_share, batch_rng(seed, dataset, fraction, r))
                   for r in range(repeats)]
        lap("work")
        write_batches(out_path, batches, made_for=graph, dataset=dataset, experiment="random",
                      fraction=float(fraction), insert_share=float(insert_share), repeats=int(repeats),
                      seed=int(seed), edges=edges)
        lap("writing")
        log(f"{out_path}: {len(batches)} batches on |E|={edges} non-self-loop edges, "
            f"{'/'.join(str(b.insertions) for b in batches)} insertions, "
            f"{'/'.join(str(b.deletions) for b in batches)} deletions")


def temporal_batch_files(graph_path: str | Path, base_path: str | Path, out_paths: Mapping[float, str | Path],
                         dataset: str, base_fraction: float, num_batches: int, log: Log = no_log,
                         lap: Log = no_lap) -> None:
    """Rule ``temporal_batches``: the base graph of the temporal experiment and, for each fraction of
    ``out_paths`` (fraction -> file), consecutive insertion batches after it (paper 5.1.4); ``lap``
    books load, work and writing."""
    graph, temporal = load_prepared(graph_path)
    if temporal is None:
        raise ValueError(f"{graph_path}: {dataset} has no temporal edges (temporal_src/temporal_dst)")
    src, dst, _time = temporal
    lap("load and checks")
    base, base_events = temporal_base(src, dst, graph.num_vertices, base_fraction)
    lap("work")
    base.save(base_path, param_dataset=np.asarray(dataset), param_experiment=np.asarray("temporal"),
              param_base_fraction=np.asarray(float(base_fraction)), param_temporal_edges=np.asarray(len(src)),
              param_base_events=np.asarray(base_events))
    lap("writing")
    log(f"{base_path}: {base_events} of {len(src)} temporal edges -> {base.num_vertices} vertices, "
        f"{base.num_edges} edges (self-loop on every vertex included)")
    for fraction, out_path in out_paths.items():
        base, batches, stats = temporal_batches(src, dst, graph.num_vertices, base_fraction, fraction, num_batches)
        lap("work")
        write_batches(out_path, batches, made_for=base, dataset=dataset, experiment="temporal",
                      fraction=float(fraction), base_fraction=float(base_fraction), num_batches=int(num_batches),
                      batch_size=stats.batch_size, temporal_edges=stats.temporal_edges,
                      base_events=stats.base_events)
        lap("writing")
        empty = sum(b.insertions == 0 for b in batches)
        log(f"{out_path}: {len(batches)} batches of B={stats.batch_size} temporal edges; "
            f"read {stats.events.sum()}, inserted {stats.inserted.sum()}, dropped {stats.dropped_present.sum()} "
            f"present, {stats.dropped_repeated.sum()} repeated in their batch, {stats.dropped_self_loops.sum()} "
            f"self-loops; {empty} batches empty; {stats.short_batches} short batches"
            + (" (temporal edges ran out)" if stats.short_batches else ""))
