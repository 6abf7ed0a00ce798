# s16-run1: TMA multicast, first device run (session 15's s15-run1 spent its 600 s in the CPU
# reference of Mixtral at 1,100 tokens): correctness of the FP8 multicast kernel (fused, two-phase)
# on Mixtral (a shared pair, a phantom) and the four other models (pairs of two experts,
# phantoms), then the kernel alone, plain beside multicast (.m1), Mixtral 512 / 1,024 and
# DeepSeek-V3 4,096 pairs balanced.
MC_PARTS="test bench" MC_MODES="mx-fused mx-split1 fused" V2_TIMEOUT=150 V2_BENCH_TIMEOUT=200 \
  MC_LOADS=m512,m1024,4096b \
  MC_VARIANTS=m:r128.w256.s3.u1.k2,m:r128.w256.s3.u1.k2.m1,m:r128.w128.s4.u1.k2,m:r128.w128.s4.u1.k2.m1,m:r128.w128.s4,m:r128.w128.s4.m1,d:r128.w256.s3.u1,d:r128.w256.s3.u1.m1 \
  tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ 2>/dev/null
cp build-gpucheck-logs/mcast-test-*.txt build-gpucheck-logs/mcast-bench-*.txt $OUT/ 2>/dev/null
rm -f $OUT/*.csv
grep -E "exit|passed|failed|^[qmd]:r|total" $OUT/tables.txt | head -60
