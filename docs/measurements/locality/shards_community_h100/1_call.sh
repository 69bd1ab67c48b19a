set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src
nvidia-smi --query-gpu=name --format=csv
python3 -m pytest -q -m gpu tests/test_gpu_blocking.py tests/test_gpu_locality.py tests/test_locality.py tests/test_blocking.py 2>&1 | tail -5 | tee $OUT/c1_pytest.txt
