# s15-run1: TMA multicast (wide tiles) and BF16 ping-pong: correctness on the five models
V2_TIMEOUT=150 MC_PARTS=test tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ 2>/dev/null
cp build-gpucheck-logs/mcast-test-*.txt $OUT/ 2>/dev/null
grep -E "exit|passed|failed" $OUT/tables.txt | head -30
