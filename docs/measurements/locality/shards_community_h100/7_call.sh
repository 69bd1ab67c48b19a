python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
timeout 400 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=60 -m gpu tests/test_gpu_shards.py tests/test_gpu_blocking.py tests/test_gpu_locality.py tests/test_locality.py > $OUT/7_pytest_refactor.txt 2>&1
echo "rc $? $SECONDS"; tail -4 $OUT/7_pytest_refactor.txt
