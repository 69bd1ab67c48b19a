"""ncu target: one rmat-22 iteration of propagation blocking (float32), its kernels launched one by one."""
import sys

from dynpr.gpu import blocking, loader
from dynpr.gpu.device_graph import to_device
from dynpr.pagerank.options import PageRankOptions
from dynpr.rmat import rmat_graph

cupy = loader.require_cupy()
graph = rmat_graph(int(sys.argv[1]), 16, seed=1, resident=True)
db = blocking._build(cupy, to_device(graph), "float32", blocking.BIN_WIDTH)
print(blocking.BlockedLoop(db, PageRankOptions()).phase_ms(1))
