python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
A=$OUT/final; mkdir -p $A
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
which ncu nsys 2>&1 | head -3; ls /usr/local/cuda*/bin 2>/dev/null | grep -E "ncu|nsys" | head
timeout 270 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $A/pytest_gpu.txt 2>&1; echo "pytest rc $? $SECONDS"; tail -n 4 $A/pytest_gpu.txt
timeout 260 python3 benchmarks/bench_locality.py --scales 22 26 --shares --variants --datasets --repeats 3 --bin-widths 16384 24576 --out $A/locality_blocking.csv > $A/locality_blocking.txt 2>&1; echo "bench rc $? $SECONDS"
python3 -c "
import pandas as pd; t = pd.read_csv('$A/locality_blocking.csv')
print(t[['graph','variant','approach','bin_width','bins','tiles','expand_ms','accumulate_ms','time_ms','ms_per_iteration','speedup_vs_default','iterations_delta','l1_ratio','layout_ms','peak_pool_bytes','layout_bytes_model']].to_string())"
tar czf $OUT/final.tgz -C $OUT final && rm -rf $A
