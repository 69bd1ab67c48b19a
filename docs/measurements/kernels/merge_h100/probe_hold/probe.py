"""Where a small solve's time goes, main against this tree (device call D). Usage: python _probe.py TREE OUT"""
import cProfile, io, pstats, sys, time
from pathlib import Path
import numpy as np

tree, out = sys.argv[1], Path(sys.argv[2])
from dynpr.batches import apply_batch, random_batch
from dynpr.gpu import iterations, pagerank as engine
from dynpr.gpu.resident import to_resident
from dynpr.pagerank.options import PageRankOptions
from dynpr.prepare import read_graph_with_ids

full, _, _ = read_graph_with_ids("datasets/embedded/web-NotreDame.txt.gz", results=Path("/tmp/probe_graphs"))
resident = to_resident(full)
rng = np.random.default_rng(42)
base = engine._update("static", None, resident, None, None, PageRankOptions()).ranks
batches = [random_batch(full, 1e-6, 0.8, rng) for _ in range(8)]
news = [apply_batch(resident, b) for b in batches]
rows = []
for hold in (150, 1000):
    iterations.HOLD_US = hold
    for k, (b, new) in enumerate(zip(batches, news)):
        for approach in ("nd", "df", "dfp"):
            for rep in range(7):
                t0 = time.perf_counter()
                r = engine._update(approach, resident, new, b, base, PageRankOptions())
                rows.append((tree, hold, k, approach, rep, r.time_ms, 1e3 * (time.perf_counter() - t0), r.iterations))
import pandas as pd
d = pd.DataFrame(rows, columns=["tree", "hold_us", "batch", "approach", "rep", "device_ms", "host_wall_ms", "iterations"])
d.to_csv(out / f"probe_{tree}.csv", index=False)
print(d[d.rep > 0].groupby(["hold_us", "approach", "batch"])[["device_ms", "host_wall_ms"]].median().unstack("hold_us").round(3).to_string())
iterations.HOLD_US = 150
prof = cProfile.Profile()
prof.enable()
for _ in range(100):
    engine._update("nd", resident, news[4], batches[4], base, PageRankOptions())
prof.disable()
s = io.StringIO(); pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30); print(s.getvalue()[:6000])
