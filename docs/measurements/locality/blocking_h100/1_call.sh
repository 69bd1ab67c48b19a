python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
A=$OUT/pb3; mkdir -p $A
timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gpu_blocking.py > $A/pytest.txt 2>&1; echo "pytest rc $? $SECONDS"; tail -n 15 $A/pytest.txt
timeout 300 python3 benchmarks/bench_locality.py --scales 22 26 --shares --variants --datasets --repeats 3 --out $A/locality_pb3.csv > $A/locality_pb3.txt 2>&1; echo "bench rc $? $SECONDS"
python3 -c "
import pandas as pd; t = pd.read_csv('$A/locality_pb3.csv')
print(t[['graph','variant','approach','accumulator','expand_ms','accumulate_ms','time_ms','ms_per_iteration','iterations_delta','l1_ratio','layout_ms']].to_string())"
tar czf $OUT/pb3.tgz -C $OUT pb3 && rm -rf $A
