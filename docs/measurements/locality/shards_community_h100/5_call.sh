python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg
A=$OUT/c5; mkdir -p $A
for k in 1 2; do
timeout 120 python3 benchmarks/bench_locality.py --scales 22 --graph-orders given community --shares --variants classes_c32 --datasets --blocking --shards --repeats 9 --out $A/locality_community_22_run$k.csv > $A/locality_community_22_run$k.txt 2>&1
echo "community $k rc $? $SECONDS"; tail -13 $A/locality_community_22_run$k.txt | cut -c1-200
done
timeout 330 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=120 -m gpu tests > $A/pytest_gpu_all.txt 2>&1
echo "suite rc $? $SECONDS"; tail -5 $A/pytest_gpu_all.txt
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $A
