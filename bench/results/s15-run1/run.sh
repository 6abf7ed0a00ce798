# s15-run1: TMA multicast of wide tiles' weight stages: correctness, then the kernel alone
V2_TIMEOUT=150 MC_PARTS="test bench" MC_BF16=1 tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ 2>/dev/null
cp build-gpucheck-logs/mcast-test-*.txt $OUT/ 2>/dev/null
rm -f $OUT/*.csv
grep -E "exit|^wrote|passed|failed" $OUT/tables.txt | head -30
