#!/usr/bin/env bash
# s35-run1: the cluster gather (ramp_moe_v2_opts.cgather, RAMP_MV2_CGATHER;
# kernels/moe_v2.md, session 35). A narrow fused tile run by a cluster of C
# CTAs on C slices: each projects up its own slice, the C copy their FP8
# intermediates into each other's shared memory, each projects down 1/C of d
# over the C slices, so each output element takes h / (w C) additions
# instead of h / w, in one launch.
# Correct before fast: test_gpu_moe_v2 (CPU reference and v1, every element,
# the default grid and one cluster striding over all tiles) with C = 8 on
# Mixtral-8x22B and OLMoE, 4 on DeepSeek-V3, 2 on Qwen3-30B, row-major and
# on stage units; memcheck and racecheck on OLMoE and Mixtral. Then the
# kernel alone on Mixtral-8x22B's small loads (stage units, L2 emptied by a
# read) against the layer's entries (r32 / r16 / r64 .ph2.dk4 = .u1.k4, the
# split-K r8.w256.k2 = .c2) and the fused tile without its output (.d4).
# Prediction: fused r32 on 16 pairs ~80 us (the fused stream at the floor,
# session 29: 76 us, plus 1/8 of its 128-way reductions) against 86 for
# .ph2.dk4.
set -u
PART=${PART:-all}
O=${OUT:-/tmp/out}; W=/tmp/s35r1; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
git log -1 --format=%H >> $W/env.txt
cd build-gpucheck
if [ $PART != bench ]; then
CF=r2.w128.s4,r8.w128.s4,r16.w128.s4,r24.w128.s4,r32.w128.s4,r48.w128.s4,r8.w256.s4,r32.w256.s4
t() { # name, env...
  local n=$1; shift
  env RAMP_TEST_TMP=/tmp/s35tt RAMP_MOE_CONFIGS=$CF "$@" timeout 150 ./test_gpu_moe_v2 > $W/test-$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test-$n.txt | tail -1))"
}
t cg8 RAMP_MOE_V2_CGATHER=8 RAMP_MOE_V2_MODELS=mixtral-8x22b,olmoe
t cg8-units RAMP_MOE_V2_CGATHER=8 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=mixtral-8x22b,olmoe
t cg4 RAMP_MOE_V2_CGATHER=4 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=deepseek-v3,mixtral-8x22b
t cg2 RAMP_MOE_V2_CGATHER=2 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe
for tool in memcheck racecheck; do
  env RAMP_MOE_V2_CGATHER=8 RAMP_MOE_V2_MODELS=olmoe RAMP_MOE_CONFIGS=r8.w128.s4,r32.w128.s4 \
    RAMP_MOE_V2_NO_V1=1 timeout 100 compute-sanitizer --tool $tool \
    --error-exitcode 3 ./test_gpu_moe_v2 > $W/cg8-$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/cg8-$tool.txt))"
done
fi
if [ $PART != test ]; then
V=m:r32.w128.s4.t3.u1.k4,m:r16.w128.s4.t3.u1.k4,m:r64.w128.s4.t3.u1.k4,m:r8.w256.s4.t3.c2
V=$V,m:r32.w128.s4.t3,m:r32.w128.s4.t3.d4,m:r32.w128.s4.t3.a2,m:r32.w128.s4.t3.a4
V=$V,m:r32.w128.s4.t3.a8,m:r32.w128.s4.t3.a8.d4,m:r16.w128.s4.t3.a8,m:r8.w128.s4.t3.a8
V=$V,m:r16.w256.s4.t3.a4,m:r64.w128.s4.t3.a4
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=cgather RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m4,m8,m16,m32,m64 timeout 200 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
fi
cd ..
tar czf $O/s35-run1-$PART.tgz -C /tmp s35r1
grep -E "violat|differ" $W/test-*.txt | head -20
grep -E "^\| Mixtral|^\| mixtral" $W/moe-v2-*-cgather.md 2>/dev/null | head -80
