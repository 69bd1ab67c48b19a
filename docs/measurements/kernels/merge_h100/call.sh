#!/bin/bash
# Call A: main vs kernels2 vs c32k on the bench graphs; classes_c32 at rmat-22/25(/26); GPU tests.
A=/tmp/A2; mkdir -p $A; cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg; [ -d /tmp/site ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
D=$PWD/datasets/embedded; ln -sfn ../datasets _c32k/datasets
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $A/gpu.txt
bench() {  # tree round
  local t=$1 r=$2 d=$PWD/_$1
  local E="env PYTHONPATH=$d/src:/tmp/site DYNPR_KERNELS=$d/src/dynpr/kernels python $d/benchmarks/bench_gpu.py"
  echo "$(date +%T) bench $t round $r" >> $A/progress.txt
  $E --dataset $D/web-NotreDame.txt.gz --mode random --fractions 1e-6 1e-4 1e-2 --batches 2 --partitions in_out --out $A/gpu_web-NotreDame_${t}_r$r.csv > $A/bench_web-NotreDame_${t}_r$r.txt 2>&1
  $E --dataset $D/sx-mathoverflow.txt.gz --mode temporal --fractions 1e-5 1e-4 1e-3 --batches 20 --partitions in_out --out $A/gpu_sx-mathoverflow_${t}_r$r.csv > $A/bench_sx-mathoverflow_${t}_r$r.txt 2>&1
}
for t in main kernels2 c32k; do bench $t 1; done
for t in c32k kernels2 main; do bench $t 2; done
echo "$(date +%T) locality 22 25" >> $A/progress.txt
(cd _c32k && PYTHONPATH=src:/tmp/site python benchmarks/bench_locality.py --scales 22 25 --shares --datasets web-NotreDame sx-mathoverflow --variants classes_c32 --out $A/locality_c32k.csv > $A/locality_c32k.txt 2>&1)
echo "$(date +%T) gpu tests" >> $A/progress.txt
(cd _c32k && PYTHONPATH=src:/tmp/site timeout 900 python -m pytest -q -p no:cacheprovider tests/test_gpu_contributions.py tests/test_gpu.py tests/test_memory.py tests/test_gpu_locality.py > $A/pytest_gpu_c32k.txt 2>&1)
echo "$(date +%T) locality 26" >> $A/progress.txt
(cd _c32k && PYTHONPATH=src:/tmp/site python benchmarks/bench_locality.py --scales 26 --shares --datasets --variants classes_c32 --repeats 3 --out $A/locality_c32k_26.csv > $A/locality_c32k_26.txt 2>&1)
echo "$(date +%T) done" >> $A/progress.txt
