# One fresh H100 call at c4a13f0 (the device checkout reports its stale .git HEAD, 765058a+dirty, in
# the CSV): the GPU suite (cut at 170 s by the budget: 572 of 582 passed, none failed), then
# bench_locality at rmat-25, segmented at half and all of the L2. Wheels in .whl/.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; git log --oneline -1 2>/dev/null | head -1; echo "start $SECONDS"
timeout 170 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/pytest_gpu.txt 2>&1; echo "pytest rc $? at $SECONDS s"; tail -n 2 $OUT/pytest_gpu.txt
left=$((255 - SECONDS)); [ $left -gt 30 ] && timeout $left python3 benchmarks/bench_locality.py --scales 25 --shares 0.5 1 --variants --datasets --repeats 3 --out $OUT/locality_25.csv > $OUT/locality_25.txt 2>&1; echo "bench rc $? at $SECONDS s"; tail -n 12 $OUT/locality_25.txt
