# One H100 call: main (_main/ = `git archive bece0a0 src benchmarks | tar -x -C _main`) against the
# working tree (765058a), bench graphs in rounds main, new, new, main; then the GPU suite. Wheels in /tmp/site.
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg PATH=/tmp/site/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
A=$OUT/k34; mkdir -p $A; D=$PWD/datasets/embedded
bench() {  # tree round
  local t=$1 r=$2 d; [ $t = main ] && d=$PWD/_main || d=$PWD
  local E="env PYTHONPATH=$d/src:/tmp/site DYNPR_KERNELS=$d/src/dynpr/kernels python3 $d/benchmarks/bench_gpu.py"
  $E --dataset $D/web-NotreDame.txt.gz --mode random --fractions 1e-6 1e-4 1e-2 --batches 8 --partitions in_out --out $A/gpu_web-NotreDame_${t}_r$r.csv > $A/bench_web-NotreDame_${t}_r$r.txt 2>&1
  $E --dataset $D/sx-mathoverflow.txt.gz --mode temporal --fractions 1e-5 1e-4 1e-3 --batches 20 --partitions in_out --out $A/gpu_sx-mathoverflow_${t}_r$r.csv > $A/bench_sx-mathoverflow_${t}_r$r.txt 2>&1
  echo "bench $t r$r $SECONDS"
}
bench main 1; bench new 1; bench new 2; bench main 2
timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $A/pytest_gpu.txt 2>&1; echo "pytest rc $? $SECONDS"; tail -n 3 $A/pytest_gpu.txt
tar czf $OUT/k34.tgz -C $OUT k34 && rm -rf $A && ls $OUT
