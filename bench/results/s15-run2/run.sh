# s15-run2 (after s15-run1 passes): the kernel alone, plain / multicast / ping-pong, FP8 and BF16
MC_PARTS=bench MC_BF16=1 tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ 2>/dev/null
rm -f $OUT/*.csv
grep -E "^[qmd]:r|exit" $OUT/tables.txt | head -80
