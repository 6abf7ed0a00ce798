# s16-run3: multicast with the partner's release relaxed (no MEMBAR.ALL.GPU before each remote
# arrival, no CCTL.IVALL after each wait of the producer: the SASS of s16-run1's programs had
# both in every stage). Correctness (Mixtral two-phase: a shared pair and a phantom; the four
# other models fused), the kernel alone plain beside .m1 as s16-run1, then compute-sanitizer
# memcheck and racecheck on Qwen3-30B (pairs of two experts, phantoms) and memcheck on Mixtral.
MC_PARTS="test bench" MC_MODES="mx-split1 fused" V2_TIMEOUT=100 V2_BENCH_TIMEOUT=150 \
  MC_LOADS=m512,m1024,4096b \
  MC_VARIANTS=m:r128.w256.s3.u1.k2,m:r128.w256.s3.u1.k2.m1,m:r128.w128.s4.u1.k2,m:r128.w128.s4.u1.k2.m1,m:r128.w128.s4,m:r128.w128.s4.m1,d:r128.w256.s3.u1,d:r128.w256.s3.u1.m1 \
  tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log build-gpucheck-logs/mcast-test-*.txt \
  build-gpucheck-logs/mcast-bench-*.txt build-gpucheck-logs/*mcast*.md $OUT/ 2>/dev/null
grep -E "exit|passed|failed|^[qmd]:r|total" $OUT/tables.txt | head -40
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
cd build-gpucheck
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} RAMP_KERNEL_DIR=$PWD/../kernels RAMP_DATA_DIR=$PWD/../data \
  RAMP_CACHE_DIR=$PWD/jit-cache RAMP_TEST_TMP=$PWD/test-tmp RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_NO_V1=1
for run in "memcheck qwen3-30b r128.w256.s3 0 1" "racecheck qwen3-30b r128.w256.s3 0 1" \
           "memcheck mixtral-8x22b r128.w128.s4 140 0"; do
  set -- $run
  RAMP_MOE_V2_MODELS=$2 RAMP_MOE_CONFIGS=$3 RAMP_MOE_TOKENS=$4 RAMP_MOE_V2_SPLIT=$5 timeout 100 \
    compute-sanitizer --tool $1 --error-exitcode 3 ./test_gpu_moe_v2 > $OUT/sanitize-$1-$2.txt 2>&1
  echo "sanitize $run: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-$1-$2.txt))"
done
