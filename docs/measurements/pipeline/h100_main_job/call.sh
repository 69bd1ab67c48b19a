. .dev/setup.sh
F=/tmp/fresh; mkdir -p $F; tar --exclude=./.whl --exclude=./.dev --exclude=./.old --exclude=./results --exclude=./figures --exclude=./.git --exclude=./.snakemake -cf - . | tar -xf - -C $F
cd $F; export PYTHONPATH=/tmp/site:$F/src; s=$SECONDS
timeout 200 snakemake --cores 1 figures > $OUT/figures_run.txt 2>&1; rc=$?; w=$((SECONDS - s))
echo "figures rc $rc wall ${w}s"; tail -2 $OUT/figures_run.txt
python3 benchmarks/pipeline_time.py results/logs --snakemake-s $w > $OUT/pipeline_time_gpu.md 2>&1; cat $OUT/pipeline_time_gpu.md
cp results/claims.csv $OUT/claims_gpu_main.csv 2>/dev/null
if [ $rc = 0 ] && [ $SECONDS -lt 215 ]; then s=$SECONDS; timeout $((255 - SECONDS)) snakemake --cores 1 figures --forcerun results/runs/CollegeMsg.csv > $OUT/forcerun.txt 2>&1; echo "forcerun rc $? wall $((SECONDS - s))s"; fi
tar -czf $OUT/results_gpu_main.tar.gz results/logs results/benchmarks results/summary.csv 2>/dev/null
