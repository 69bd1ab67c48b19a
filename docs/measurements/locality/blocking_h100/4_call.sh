export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
A=$OUT/prof; mkdir -p $A
timeout 200 ncu -k regex:blocking --launch-skip 2 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section SchedulerStats python3 .whl/prof.py 22 > $A/ncu_rmat22.txt 2>&1; echo "ncu rc $? $SECONDS"
grep -E "blocking_|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Stall|Warp Cycles Per Issued|Issued Warp|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|One or More|No Eligible|ERR" $A/ncu_rmat22.txt | head -60
tar czf $OUT/prof.tgz -C $OUT prof && rm -rf $A
