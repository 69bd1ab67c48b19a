python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
A=$OUT/c4; mkdir -p $A
nvidia-smi --query-gpu=name,driver_version --format=csv > $A/device.txt
timeout 130 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=60 -m gpu tests/test_bench.py "tests/test_gpu_locality.py::test_bench_locality_writes_its_rows" > $A/pytest_bench.txt 2>&1
echo "tests rc $? $SECONDS"; tail -5 $A/pytest_bench.txt
timeout 140 python3 benchmarks/bench_locality.py --scales 22 --graph-orders given community --shares --variants --datasets --blocking --shards --out $A/locality_community_22.csv > $A/locality_community_22.txt 2>&1
echo "community rc $? $SECONDS"; tail -9 $A/locality_community_22.txt
timeout 240 python3 benchmarks/bench_locality.py --scales 26 --shares --variants --datasets --blocking --shards float32 --repeats 3 --out $A/locality_shards_26.csv > $A/locality_shards_26.txt 2>&1
echo "rmat26 rc $? $SECONDS"; tail -6 $A/locality_shards_26.txt
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $A
