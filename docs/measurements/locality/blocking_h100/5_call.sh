python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
A=$OUT/final2; mkdir -p $A
timeout 150 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_gpu_blocking.py tests/test_gpu_locality.py::test_bench_locality_writes_its_rows > $A/pytest.txt 2>&1; echo "pytest rc $? $SECONDS"; tail -n 5 $A/pytest.txt
timeout 210 python3 benchmarks/bench_locality.py --scales 22 26 --shares --variants --datasets --repeats 3 --out $A/locality_blocking_grouped.csv > $A/locality_blocking_grouped.txt 2>&1; echo "bench rc $? $SECONDS"
python3 -c "
import pandas as pd; t = pd.read_csv('$A/locality_blocking_grouped.csv')
print(t[['graph','variant','approach','bin_width','bins','tiles','expand_ms','accumulate_ms','time_ms','ms_per_iteration','speedup_vs_default','iterations_delta','l1_ratio','layout_ms']].to_string())"
tar czf $OUT/final2.tgz -C $OUT final2 && rm -rf $A
