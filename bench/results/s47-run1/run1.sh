#!/usr/bin/env bash
# s47-run1 call 1 (repo root, carry [".debs"]): where the polymorphic
# kernel's head goes. Session 46 put 2.6-4.5 us between the MoE kernel
# passing its wait and its first weights being requested (2.2-4.0 with no
# loads). New stamps (kernels/timeline.cuh e8-e11) split it: the choice
# arrived, the entry set up (first tile's expert arrived, barriers made),
# past the block barrier, the producer past setmaxnreg.
# Runs: Qwen3-30B EP8 six-entry plan (d0, and d3: no loads), the same
# loads on one-entry plans (r8.w128.s4, r16.w128.s4: ~1/6 of the code),
# OLMoE EP8 six-entry (d0).
# Predicted: choice ~0.5-0.7 us after the wait (one L2 round trip), set-up
# ~0.5-0.7 more (the first tile's reads), barrier and setmaxnreg < 0.2,
# producer to request 0.5-1. If the head is instruction fetch (session 27:
# the six-entry kernel's code is spread over ~175 KB), the one-entry plans'
# head is >= 1 us shorter with the same data reads.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s47r1; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s47-run1.tgz -C /tmp s47r1' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
P=../bench/results/s46-run1/plans
run() { # tag plan tokens diag
  local d=$W/$1; mkdir -p $d
  RAMP_JIT_DEFINES="RAMP_MV2_DIAG=$4" timeout 120 ./bench_stack --plan $2 --out-dir $d \
    --tokens $3 --layers 8 --reps 10 --select-pdl 0 --check $([ $4 = 0 ] && echo 1 || echo 0) \
    --timeline 1 > $d/out.txt 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
run qwen3-six-d0 $W/plan-qwen3-30b-ep8-v2.json 16,64,256 0
run qwen3-six-d3 $W/plan-qwen3-30b-ep8-v2.json 16,64,256 3
run qwen3-r8-d0 $P/qwen3-30b-ep8-v2-r8.w128.s4.json 16,64,256 0
run qwen3-r16-d0 $P/qwen3-30b-ep8-v2-r16.w128.s4.json 16,64,256 0
run olmoe-six-d0 $W/plan-olmoe-ep8-v2.json 16,64 0
grep -hE "^ *[0-9]+ +(uniform|skewed)" $W/*/out.txt
python3 ../bench/timeline_head.py $W | tee $W/head.txt
