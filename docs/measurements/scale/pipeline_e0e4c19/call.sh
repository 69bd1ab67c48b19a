python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 MPLBACKEND=Agg PATH=/tmp/site/bin:$PATH
mkdir -p /tmp/sc; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; free -g | sed -n 2p
setsid nohup bash benchmarks/scale_pipeline.sh /tmp/sc "[rmat-25,rmat-26]" results/runs/rmat-25.csv results/runs/rmat-26.csv > /tmp/sc/driver.log 2>&1 < /dev/null &
bash .whl/sc_wait.sh
