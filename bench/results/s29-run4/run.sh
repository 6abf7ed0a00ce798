#!/usr/bin/env bash
# s29-run4: request size, TMA box size and the MoE kernel's weight stream
# (session 29). s29-run1/2: kernel v2 streams weights by TMA at ~4.0 TB/s
# (16 KB boxes, 128 KB in flight a block) where the read floor's bulk
# copies (64 KB requests, 192 KB in flight) reach 4.3-4.6 at 128-1024 MiB,
# and neither the blocks' order nor the layout explains it. Here: the bulk
# kernel with requests of 16, 32 and 64 KB and 128 or 192 KB in flight
# (bench_layer's read sweep), and kernel v2 with each W2 stage as one
# 256-row box (32 KB, `.e1`, RAMP_MV2_W2BOX256) instead of two of 128 rows.
# Correct first: test_gpu_moe_v2 with W2 boxes of 256 rows (every narrow FP8
# tile without split-K of three models, fused and two-phase) against the CPU
# reference and v1; memcheck on Mixtral r32 two-phase.
set -u
O=${OUT:-/tmp/out}; R=bench/results/s29-run4; W=/tmp/s29r4; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
M="RAMP_MOE_V2_MODELS=mixtral-8x22b,qwen3-30b,deepseek-v3 RAMP_TEST_TMP=/tmp/s29tt RAMP_MOE_V2_W2BOX=1"
env $M timeout 150 ./test_gpu_moe_v2 > $W/test-w2box.txt 2>&1
echo "test w2box exit $? ($(grep -m1 -E 'violation' $W/test-w2box.txt))"
env $M RAMP_MOE_V2_SPLIT=1 timeout 150 ./test_gpu_moe_v2 > $W/test-w2box-split.txt 2>&1
echo "test w2box split exit $? ($(grep -m1 -E 'violation' $W/test-w2box-split.txt))"
env RAMP_TEST_TMP=/tmp/s29tt RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r32.w128.s4 RAMP_MOE_TOKENS=24 \
  RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_W2BOX=1 RAMP_MOE_V2_NO_V1=1 timeout 100 compute-sanitizer --tool memcheck \
  --error-exitcode 3 ./test_gpu_moe_v2 > $W/memcheck-w2box-split.txt 2>&1
echo "memcheck exit $? ($(grep -m1 'ERROR SUMMARY' $W/memcheck-w2box-split.txt))"
V=
for e in "" .e1; do
  V=$V,m:r32.w128.s4.u1.k4$e,m:r32.w128.s4.u3.k4$e,m:r32.w128.s4.u3.k4$e.d2,m:r64.w128.s4.u1.k4$e
  V=$V,m:r32.w128.s4$e.d2,q:r16.w256.s4$e,q:r8.w128.s4$e
done
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=w2box RAMP_MV2_BENCH_VARIANTS=${V#,} \
  RAMP_MV2_BENCH_LOADS=m16,m64,m256,64b,512b timeout 200 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
mkdir -p $W/layer
./build-gpucheck/bench_layer --plan bench/results/s29-run2/plan-mixtral-8x22b-ep8.json \
  --dataset data/timing/mixtral-8x22b-ep8-v2.safetensors --tokens 64 --reps 20 --kernel v2 \
  --flush read --out-dir $W/layer > $W/layer/log.txt 2>&1
echo "bench_layer exit $?"
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s29-run4.tgz -C /tmp s29r4
grep -E "^\| (mixtral|qwen)" $W/moe-v2-*-w2box.md | cut -d'|' -f2-9
grep -E "^  fit on" $W/layer/log.txt
python3 - $W/layer/read-sweep.csv <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
for r in rows:
    if r['mib'] in ('64', '128', '256', '1024'): print(r['kernel'], r['mib'], r['us_median'], r['tb_s'])
PY
