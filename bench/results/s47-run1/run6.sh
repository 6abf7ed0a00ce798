#!/usr/bin/env bash
# s47-run1 call 6 (repo root, carry [".debs"]): the blocks' uneven end on
# the large models. Calls 1-5 found the latest block of a launch ending
# 2-3 us after the mean one on Qwen3-30B/OLMoE EP8 (64-256 tokens uniform),
# 0.6-2.6 us of it with the weights' stream alone. Here Mixtral-8x22B and
# DeepSeek-V3 EP8 (16-256 tokens; their layers 110-480 us), d0 and d2, one
# process each; the first kernel of the chain only (timeline_head.py: a
# two-phase entry's phase 2 is the second kernel).
# Predicted: the lateness grows with the blocks' stream (several us on
# DeepSeek-V3's 200-480 us layers), so the same lever matters there too.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s47r6; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s47-run6.tgz -C /tmp s47r6' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
for ds in mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # tag dataset tokens diag
  local d=$W/$1; mkdir -p $d
  RAMP_JIT_DEFINES="RAMP_MV2_DIAG=$4" timeout 120 ./bench_stack --plan $W/plan-$2.json --out-dir $d \
    --tokens $3 --layers 8 --reps 5 --select-pdl 0 --check $([ $4 = 0 ] && echo 1 || echo 0) \
    --timeline 1 > $d/out.txt 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
run mixtral-d0 mixtral-8x22b-ep8-v2 16,64,256 0; run mixtral-d2 mixtral-8x22b-ep8-v2 16,64,256 2
run dsv3-d0 deepseek-v3-ep8-v2 16,64,256 0; run dsv3-d2 deepseek-v3-ep8-v2 16,64,256 2
grep -hE "^ *[0-9]+ +(uniform|skewed)" $W/*/out.txt
python3 ../bench/timeline_head.py $W > $W/head.txt
grep -E " stack " $W/head.txt | cut -c1-29,36-70,168-
