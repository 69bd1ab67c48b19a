. .dev/setup.sh
OLD="env PYTHONPATH=/tmp/site:$PWD/.old/src DYNPR_KERNELS=$PWD/.old/src/dynpr/kernels"
SX="--dataset sx-mathoverflow --mode temporal --batches 10 --fractions 1e-5 1e-4 1e-3 --partitions in_out"
ND="--dataset web-NotreDame --mode random --batches 5 --fractions 1e-5 1e-4 1e-3 --partitions in_out"
for r in 1 2; do
  timeout 70 $OLD python3 .old/benchmarks/bench_gpu.py $SX --out $OUT/sx_old_$r.csv > /dev/null 2>$OUT/err_sx_old.txt; echo "sx old $r rc $? at ${SECONDS}s"
  timeout 70 python3 benchmarks/bench_gpu.py $SX --out $OUT/sx_new_$r.csv > /dev/null 2>$OUT/err_sx_new.txt; echo "sx new $r rc $? at ${SECONDS}s"
  timeout 70 $OLD python3 .old/benchmarks/bench_gpu.py $ND --out $OUT/nd_old_$r.csv > /dev/null 2>$OUT/err_nd_old.txt; echo "nd old $r rc $? at ${SECONDS}s"
  timeout 70 python3 benchmarks/bench_gpu.py $ND --out $OUT/nd_new_$r.csv > /dev/null 2>$OUT/err_nd_new.txt; echo "nd new $r rc $? at ${SECONDS}s"
  [ $SECONDS -gt 250 ] && break
done
tail -2 $OUT/err_*.txt
