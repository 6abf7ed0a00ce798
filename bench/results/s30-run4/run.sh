#!/usr/bin/env bash
# s30-run4: stage units for BF16 layers (session 30). A BF16 stage is the
# same 32 KB (two boxes of 128 rows x 128 bytes = 64 elements), so the
# units are the FP8 packing with 2-byte elements (ramp_weights_to_units
# elem_bytes 2) and the kernel's unit index counts K blocks of V2_KE = 64.
# Prediction: as FP8 (s30-run2/3): DeepSeek-V3 and Mixtral faster on every
# load, by about as many us as FP8 (the same number of stages per byte
# stream... twice the bytes, so up to twice the us).
# Correct first: test_gpu_moe_v2 BF16 on units (every BF16 tile of three
# models, fused, against the CPU reference and v1; wide two-phase with
# multicast and ping-pong), memcheck; then the layer (bench_layer --bf16 1
# --units 1, output checked against the row-major layer's).
set -u
O=${OUT:-/tmp/out}; R=bench/results/s30-run4; W=/tmp/s30r4; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
pk() { tar czf $O/s30-run4.tgz -C /tmp s30r4; }
T="env RAMP_TEST_TMP=/tmp/s30tt RAMP_MOE_V2_BF16=1 RAMP_MOE_V2_TILED=3"
(cd build-gpucheck && $T RAMP_MOE_V2_MODELS=qwen3-30b,deepseek-v3,olmoe timeout 100 ./test_gpu_moe_v2) > $W/test-bf16.txt 2>&1
echo "test bf16 units fused exit $? ($(grep -m1 'violation' $W/test-bf16.txt))"; pk
for m in mixtral-8x22b deepseek-v3; do
  mkdir -p $W/$m
  case $m in
    mixtral-8x22b) tok=64,256,1024; plan=$R/plan-$m-ep8-bf16.json; ds=data/timing/$m-ep8-v2-bf16.safetensors ;;
    *) tok=64,512,4096; plan=$R/plan-$m-ep8.json; ds=data/timing/$m-ep8-v2.safetensors ;;
  esac
  timeout 90 ./build-gpucheck/bench_layer --plan $plan --dataset $ds --tokens $tok --reps 20 \
    --kernel v2 --bf16 1 --units 1 --out-dir $W/$m > $W/$m/log.txt 2>&1
  echo "layer $m bf16 exit $?"; pk
  grep -E "^[0-9]+ +(uniform|skewed)|ramp-units|check:.* [1-9][0-9]* beyond" $W/$m/log.txt | cut -c1-100
done
(cd build-gpucheck && $T RAMP_MOE_V2_MODELS=qwen3-30b,deepseek-v3 RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_MCAST=1 \
  RAMP_MOE_V2_PIPE=1 timeout 80 ./test_gpu_moe_v2) > $W/test-bf16-mc.txt 2>&1
echo "test bf16 units two-phase multicast pipe exit $? ($(grep -m1 'violation' $W/test-bf16-mc.txt))"; pk
(cd build-gpucheck && $T RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r128.w256.s3,r16.w128.s4 RAMP_MOE_TOKENS=200 \
  RAMP_MOE_V2_NO_V1=1 timeout 80 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2) > $W/memcheck-bf16.txt 2>&1
echo "memcheck bf16 units exit $? ($(grep -m1 'ERROR SUMMARY' $W/memcheck-bf16.txt))"; pk
