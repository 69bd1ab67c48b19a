python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
A=$OUT/c3; mkdir -p $A
timeout 150 python3 -m pytest -x -q -p no:cacheprovider -o faulthandler_timeout=40 -m gpu tests/test_gpu_shards.py > $A/pytest_shards.txt 2>&1
rc=$?; echo "shards rc $rc $SECONDS"; tail -30 $A/pytest_shards.txt
if [ $rc -eq 0 ]; then
timeout 200 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=60 -m gpu tests/test_gpu_blocking.py tests/test_bench.py tests/test_gpu_locality.py > $A/pytest_rest.txt 2>&1
echo "rest rc $? $SECONDS"; tail -15 $A/pytest_rest.txt
timeout 150 python3 benchmarks/bench_gather_wall.py --scales 22 --working-sets --orders hub community --out $A/gather_wall_orders.csv > $A/gather_wall_orders.txt 2>&1
echo "wall rc $? $SECONDS"; tail -16 $A/gather_wall_orders.txt
timeout 180 python3 benchmarks/bench_locality.py --scales 22 --shares --variants --datasets --blocking float32 --shards float32 float64 --out $A/locality_shards_22.csv > $A/locality_shards_22.txt 2>&1
echo "bench rc $? $SECONDS"; tail -8 $A/locality_shards_22.txt
fi
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $A
