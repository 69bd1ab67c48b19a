python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
timeout 400 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=120 -m gpu tests > $OUT/10_pytest_gpu_all.txt 2>&1
echo "rc $? $SECONDS"; tail -3 $OUT/10_pytest_gpu_all.txt
