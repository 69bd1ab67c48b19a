python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
timeout 420 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_shards.py tests/test_gpu_blocking.py tests/test_bench.py tests/test_gpu_locality.py 2>&1 | tail -40 | tee $OUT/c2_pytest.txt
