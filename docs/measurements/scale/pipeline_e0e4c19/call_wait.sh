s=$(date +%s); while [ $(( $(date +%s) - s )) -lt 540 ]; do pgrep -f scale_pipeline.sh >/dev/null || break; sleep 5; done
tail -4 /tmp/sc/driver.log; grep -cE "Finished job" /tmp/sc/snakemake.log; grep -E "steps" /tmp/sc/snakemake.log | tail -2
if ! pgrep -f scale_pipeline.sh >/dev/null; then tar czf $OUT/sc.tgz results/benchmarks results/logs results/runs /tmp/sc 2>/dev/null; echo packed; fi
