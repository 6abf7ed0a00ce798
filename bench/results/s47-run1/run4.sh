#!/usr/bin/env bash
# s47-run1 call 4 (repo root, carry [".debs"]): is the blocks' uneven end
# the weights' stream? Calls 1-3: every block asks for its first weights
# and gets its first stage within 0.3 us of the others, yet the last block
# ends 2-3.4 us after the mean on Qwen3-30B/OLMoE EP8 at 64-256 tokens
# uniform, its producer already 3-7 us behind the first (not by expert, SM
# or GPC). With no loads (d3) the blocks end together (0.1). Here the same
# stacks with only the weights' loads (d2: the ring and the stream, no
# gather, no math, no output) and in full (d0), two processes each.
# Predicted: if the stream's per-block rate is the cause, d2's late spread
# (latest - mean end) is most of d0's (>= 1.5 us at Qwen3 64 uniform); if
# the math and the output's reductions are, d2's is <= 0.5.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s47r4; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s47-run4.tgz -C /tmp s47r4' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # tag dataset tokens diag
  local d=$W/$1; mkdir -p $d
  RAMP_JIT_DEFINES="RAMP_MV2_DIAG=$4" timeout 120 ./bench_stack --plan $W/plan-$2.json --out-dir $d \
    --tokens $3 --layers 8 --reps 10 --select-pdl 0 --check $([ $4 = 0 ] && echo 1 || echo 0) \
    --timeline 1 > $d/out.txt 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
for i in 1 2; do
  run qwen3-d2-$i qwen3-30b-ep8-v2 64,256 2; run qwen3-d0-$i qwen3-30b-ep8-v2 64,256 0
  run olmoe-d2-$i olmoe-ep8-v2 64,256 2; run olmoe-d0-$i olmoe-ep8-v2 64,256 0
done
python3 ../bench/timeline_head.py $W > $W/head.txt
grep -E " stack .* uniform" $W/head.txt | sed -E 's/\| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \| +[0-9.-]+ \|/|/'
