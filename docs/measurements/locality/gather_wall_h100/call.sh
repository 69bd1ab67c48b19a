export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
A=$OUT/wall; mkdir -p $A
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_bench.py > $A/pytest_bench.txt 2>&1; echo "pytest rc $? $SECONDS"; tail -n 2 $A/pytest_bench.txt
timeout 300 python3 benchmarks/bench_gather_wall.py --scales 22 25 26 --out $A/gather_wall.csv > $A/gather_wall.txt 2>&1; echo "wall rc $? $SECONDS"
tail -n 40 $A/gather_wall.txt
env PYTHONPATH=$PWD/_main/src DYNPR_KERNELS=$PWD/_main/src/dynpr/kernels timeout 90 python3 -c "
from dynpr.rmat import rmat_graph; from dynpr.bench import gather_ms
g = rmat_graph(22, 16, seed=1, resident=True)
print('old gather_ms rmat-22', [round(gather_ms(g.in_offsets, g.sources, 10), 4) for _ in range(3)])
" > $A/old_gather.txt 2>&1; echo "old rc $? $SECONDS"; cat $A/old_gather.txt | tail -3
tar czf $OUT/wall.tgz -C $OUT wall && rm -rf $A
