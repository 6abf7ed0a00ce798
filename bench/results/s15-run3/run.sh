# s15-run3 (after s15-run1 passes): multicast under compute-sanitizer, and in the layer
V2_SAN_TIMEOUT=150 MC_PARTS="sanitize layer" tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ 2>/dev/null
cp build-gpucheck-logs/mcast-layer*.txt build-gpucheck-logs/mcast-sanitize-*.txt $OUT/ 2>/dev/null
grep -E "exit|passed|failed|SUMMARY" $OUT/tables.txt | head -30
