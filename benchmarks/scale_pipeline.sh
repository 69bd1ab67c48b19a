#!/usr/bin/env bash
# config/scale.yaml through Snakemake on a GPU host, as the README's scale command runs it, and
# what the pipeline itself recorded: results/benchmarks/*.tsv (wall time, max_rss per job) and the
# job logs (per-batch time breakdown, GPU pool peak). Usage (targets default to `figures`):
#   bash benchmarks/scale_pipeline.sh OUTDIR "[rmat-24,rmat-26]" [target ...]
set -uo pipefail
out=${1:?output folder}; datasets=${2:?datasets, e.g. [rmat-24]}; shift 2
mkdir -p "$out"
mem_mb=$(awk '/MemAvailable/ {print int($2 * 1.024 * 0.9 / 1000)}' /proc/meminfo)  # 90% of what is free, in MB
echo "host: $(nproc) cores, mem_mb budget $mem_mb; $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader)"
start=$(date +%s)
python3 -m snakemake "${@:-figures}" --cores "$(nproc)" --resources gpu=1 "mem_mb=$mem_mb" \
    --configfile config/scale.yaml --config "datasets=$datasets" 2>&1 | tee "$out/snakemake.log" \
    | grep -E "^(rule|localrule) |Finished job|Error|dynpr:|wildcards|resources" 
status=${PIPESTATUS[0]}
echo "snakemake exit $status after $(( $(date +%s) - start )) s"
for f in results/benchmarks/*.tsv; do [ -e "$f" ] && printf '%s\t%s\n' "$(basename "$f" .tsv)" "$(tail -n 1 "$f")"; done \
    | tee "$out/benchmarks.tsv"
tar czf "$out/logs.tgz" results/logs 2>/dev/null
exit "$status"
