. .dev/setup.sh
OLD="env PYTHONPATH=/tmp/site:$PWD/.old/src DYNPR_KERNELS=$PWD/.old/src/dynpr/kernels"
SX="--dataset sx-mathoverflow --mode temporal --batches 10 --fractions 1e-5 1e-4 1e-3 --partitions in_out"
for r in 1 2; do
  timeout 70 $OLD python3 .old/benchmarks/bench_gpu.py $SX --out $OUT/sx_old_$r.csv > /dev/null 2>&1; echo "sx old $r rc $? at ${SECONDS}s"
  timeout 70 python3 benchmarks/bench_gpu.py $SX --out $OUT/sx_new_$r.csv > /dev/null 2>&1; echo "sx new $r rc $? at ${SECONDS}s"
done
timeout 150 python3 benchmarks/bench_ppr.py --out $OUT/ppr.csv > $OUT/ppr.txt 2>&1; echo "ppr rc $? at ${SECONDS}s"; tail -15 $OUT/ppr.txt
