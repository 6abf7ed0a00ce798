# s19-run6: a wide FP8 two-phase tile's second consumer skips its wgmmas when its 64
# rows are all padding (v2w_idle, kernels/moe_v2_wide.cuh). Correctness: test_gpu_moe_v2
# on the wide two-launch runs (tokens by TMA and plain; Mixtral with multicast and
# phantoms), memcheck and racecheck, test_gpu_layer on the .tx/.mc.tx menu (200 routings);
# then the kernel alone on DeepSeek-V3 4,096 balanced and random (before: s19-run5) and
# the layer on the FP8 Mixtral and DeepSeek-V3 plans (before: s19-run3).
set -u
save() { mkdir -p $OUT/$1 && cp -r build-gpucheck-logs/. $OUT/$1/ 2>/dev/null; rm -rf $OUT/$1/datasets; }
SMOKE_WIDE=1 SMOKE_ENV=RAMP_MOE_V2_TMA_X=1 SMOKE_ONLY="split mx-split mx-mcast memcheck-1 racecheck-1" \
  tools/gpu-check env deps build smoke > $OUT/gc-smoke-tx.txt 2>&1
echo "smoke tx exit $?"; save smoke-tx
SMOKE_WIDE=1 SMOKE_ONLY="split mx-split" tools/gpu-check smoke > $OUT/gc-smoke.txt 2>&1
echo "smoke plain exit $?"; save smoke
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
V="d:r128.w128.s4.u1.y1,d:r128.w128.s4.u2.y1,d:r128.w128.s4.u3.y1,d:r128.w256.s3.u1.y1"
V="$V,m:r128.w128.s4.u1.k2.y1.m1,m:r128.w128.s4.u1.k4.y1"
mkdir -p $OUT/ds
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_LOADS=4096b,4096u,m256,m512,m1024 RAMP_MV2_BENCH_NAME=idle \
  RAMP_MV2_BENCH_VARIANTS=$V timeout 150 build-gpucheck/bench_moe_v2 $OUT/ds 20 > $OUT/ds/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
MC_PARTS=layer MC_LAYER_MENU=r8.w256.s3,r16.w256.s4,r128.w256.s3.tx,r128.w256.s3.ph2.mc.tx,r128.w128.s4.ph2.dk2.tx,r32.w256.s4 \
  MC_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 tools/gpu-check mcast > $OUT/gc-layer.txt 2>&1
echo "layer test exit $?"; save layer
LAYER_KERNEL=v2 LAYER_MODELS="mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2" LAYER_FLUSH=read \
  tools/gpu-check bench_layer > $OUT/gc-fp8.txt 2>&1
echo "bench_layer exit $?"; save fp8
rm -f $OUT/*.csv $OUT/summary.txt $OUT/gpu-check-logs.tgz
cd $OUT && tar czf s19-run6.tgz * && find . -mindepth 1 -maxdepth 1 ! -name s19-run6.tgz -exec rm -rf {} +
tar xzf s19-run6.tgz -O gc-smoke-tx.txt gc-smoke.txt gc-layer.txt | grep -E "PASS|FAIL" | head -20
tar xzf s19-run6.tgz -O ds/bench.txt | grep -E "us " | head -30
