#!/usr/bin/env bash
# s29-run2: the weights' layout and Mixtral-8x22B EP8's two-phase stream
# (session 29). s29-run1: phase 1 reads W13 by TMA alone at ~4.0 TB/s but
# phase 2 reads W2 (rows of 16 KB, boxes of 128 rows x 128 B, 96 blocks) at
# ~3.4 TB/s, while the fused tile reads all 302 MB at the copy floor. Here:
# narrow two-phase tiles on pre-tiled weights (newly allowed) in both block
# orders, .t1 row block-major and .t2 K block-major (new: blocks streaming
# different rows read one contiguous range per K step), full and TMA-only
# (.d2), beside row-major; the read floor's bulk kernel with each block on a
# contiguous region of its own (bench_layer's read sweep, bulk-blocked) and
# the Mixtral layer at 64 tokens. Correct first: test_gpu_moe_v2 with the
# narrow splits (and every tile) on .t1 / .t2 weights against the CPU
# reference and v1; memcheck on a .t2 split.
set -u
O=${OUT:-/tmp/out}; R=bench/results/s29-run2; W=/tmp/s29r2; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
M="RAMP_MOE_V2_MODELS=mixtral-8x22b,qwen3-30b RAMP_TEST_TMP=/tmp/s29tt"
for t in 1 2; do
  env $M RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_TILED=$t timeout 150 ./test_gpu_moe_v2 > $W/test-split-t$t.txt 2>&1
  echo "test split tiled $t exit $? ($(grep -m1 -E 'violation' $W/test-split-t$t.txt))"
done
env $M RAMP_MOE_V2_TILED=2 timeout 150 ./test_gpu_moe_v2 > $W/test-t2.txt 2>&1
echo "test tiled 2 exit $? ($(grep -m1 -E 'violation' $W/test-t2.txt))"
env RAMP_TEST_TMP=/tmp/s29tt RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r32.w128.s4 RAMP_MOE_TOKENS=24 \
  RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_TILED=2 RAMP_MOE_V2_NO_V1=1 timeout 100 compute-sanitizer --tool memcheck \
  --error-exitcode 3 ./test_gpu_moe_v2 > $W/memcheck-split-t2.txt 2>&1
echo "memcheck exit $? ($(grep -m1 'ERROR SUMMARY' $W/memcheck-split-t2.txt))"
V=
for t in "" .t1 .t2; do
  V=$V,m:r32.w128.s4.u1.k4$t,m:r32.w128.s4.u2$t,m:r32.w128.s4.u2$t.d2,m:r32.w128.s4.u3.k4$t,m:r32.w128.s4.u3.k4$t.d2
  V=$V,m:r32.w128.s4$t.d2,q:r16.w256.s4$t
done
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=layout RAMP_MV2_BENCH_VARIANTS=${V#,} \
  RAMP_MV2_BENCH_LOADS=m16,m64,64b,512b timeout 200 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
mkdir -p $W/layer
./build-gpucheck/bench_layer --plan $R/plan-mixtral-8x22b-ep8.json \
  --dataset data/timing/mixtral-8x22b-ep8-v2.safetensors --tokens 64 --reps 20 --kernel v2 \
  --flush read --out-dir $W/layer > $W/layer/log.txt 2>&1
echo "bench_layer exit $?"
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s29-run2.tgz -C /tmp s29r2
grep -E "^\| (mixtral|qwen)" $W/moe-v2-*-layout.md | cut -d'|' -f2-9
grep -A3 "read sweep" $W/layer/log.txt | cut -c1-600
