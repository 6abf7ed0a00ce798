#!/usr/bin/env bash
# s24-run2: test_gpu_layer (kernel v2, FP8 and BF16) with the L2 prefetch
# after the fix to its refusal checks: 24 MB (a strip of 1,024 B a row in
# FP8, 512 B in BF16 on the test layer) and 64 MB (all of W13 in FP8, a
# strip in BF16). As run through the device tool (one command line).
mkdir -p /tmp/s24r2; tools/gpu-check env deps build > /tmp/s24r2/build.log 2>&1 || { tail -20 /tmp/s24r2/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > /tmp/s24r2/env.txt; date -u >> /tmp/s24r2/env.txt
for mb in 24 64; do
  (cd build-gpucheck && RAMP_TEST_TMP=/tmp/s24tt RAMP_LAYER_KERNEL=v2 RAMP_LAYER_L2PF=$mb timeout 200 ./test_gpu_layer) > /tmp/s24r2/layer-l2pf$mb.txt 2>&1
  echo "l2pf $mb exit $?"
done
tar czf $OUT/s24-run2.tgz -C /tmp s24r2
