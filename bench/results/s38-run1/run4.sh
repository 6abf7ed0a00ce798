#!/usr/bin/env bash
# s38-run1 call 4: the wide FP8 two-phase tiles' slot stages with their
# promotion pipelined (RAMP_MV2_PPROMO=1, moe_v2_wide.cuh: four m64n64 groups
# a stage into two alternating temporaries, the next group issued before
# this one is promoted, runs of two stages unrolled), against today's rhythm.
# Predicted from call 3 (1,371 -> 1,599 TFLOP/s, the two rhythms' ceilings
# from shared memory): the math alone (.d6) of both phases 10-15% faster;
# whole launches faster only where the math is what binds (DeepSeek-V3
# 4,096 balanced, Mixtral 1,024), 0-5%; memory-bound loads unchanged.
# (1) correct: test_gpu_moe_v2 on the wide tiles of all five models, two
# phases on units (P2K 4), multicast (P2K 2), tokens by TMA, and memcheck;
# (2) the kernel alone, PPROMO 0 / 1 / 0 / 1 on one machine.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r4; rm -rf $W; mkdir -p $W/test $W/a0 $W/b1 $W/c0 $W/d1
trap 'tar czf $O/s38-run1-call4.tgz -C /tmp s38r4' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
mkdir -p /tmp/s38tt
CF=r128.w128.s4,r128.w128.s3,r128.w256.s3
t() { # name, env...
  local n=$1; shift
  env RAMP_TEST_TMP=/tmp/s38tt RAMP_MOE_CONFIGS=$CF RAMP_JIT_DEFINES=RAMP_MV2_PPROMO=1 RAMP_MOE_V2_SPLIT=1 "$@" \
    timeout 100 ./test_gpu_moe_v2 > $W/test/$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test/$n.txt | tail -1))"
}
t split4-units RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3
t split2-mcast-tx RAMP_MOE_V2_P2K=2 RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_TMA_X=1
t split1-rowmajor RAMP_MOE_V2_P2K=1
env RAMP_JIT_DEFINES=RAMP_MV2_PPROMO=1 RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3 \
  RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r128.w128.s3 RAMP_MOE_TOKENS=40 \
  RAMP_MOE_V2_NO_V1=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
  ./test_gpu_moe_v2 > $W/test/memcheck.txt 2>&1
echo "memcheck exit $? ($(grep -m1 -E 'ERROR SUMMARY' $W/test/memcheck.txt))"
M=m:r128.w128.s3.t3.u1.k4.y1 D=d:r128.w128.s3.t3.u1.y1
V=$M,$M.u2,$M.u3,$M.u2.d6,$M.u3.d6,m:r128.w128.s4.t3.u1.k2.m1.y1
V=$V,$D,$D.u2,$D.u3,$D.u2.d6,$D.u3.d6
for run in a0 b1 c0 d1; do
  RAMP_JIT_DEFINES=RAMP_MV2_PPROMO=${run#?} RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=ppromo${run#?} \
    RAMP_MV2_BENCH_VARIANTS=$V RAMP_MV2_BENCH_LOADS=m128,m256,m1024,4096b,4096u \
    timeout 110 ./bench_moe_v2 $W/$run 20 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
for run in a0 b1 c0 d1; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $5, $11}'; done
