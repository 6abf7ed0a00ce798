# s19-run5: DeepSeek-V3 EP8 4,096 pairs with each pair's expert drawn at random
# (4096u: ~125 +- 11 pairs an expert, so about a third of the experts take a second
# row tile, as in the layer's loads) against the balanced load (4096b, 128 each):
# the grouped tile order (.oG: G row tiles of a slice consecutive, sharing the
# slice's weights through L2), multicast (.m1), each launch alone.
set -u
[ -x build-gpucheck/bench_moe_v2 ] && [ build-gpucheck/bench_moe_v2 -nt bench/bench_moe_v2.c ] ||
  tools/gpu-check env deps build > $OUT/gc-build.txt 2>&1
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
V="d:r128.w128.s4.u1.y1,d:r128.w128.s4.u1.y1.o2,d:r128.w128.s4.u1.y1.o4,d:r128.w128.s4.u1.y1.o8"
V="$V,d:r128.w128.s4.u1.y1.m1,d:r128.w256.s3.u1.y1,d:r128.w256.s3.u1.y1.o2,d:r128.w256.s3.u1.y1.o4"
V="$V,d:r128.w128.s4.u2.y1,d:r128.w128.s4.u2.y1.o2,d:r128.w128.s4.u2.y1.o4,d:r128.w128.s4.u3.y1,d:r128.w128.s4.u3.y1.o2"
V="$V,d:r128.w128.s4.u3.d4.y1,d:r128.w128.s4.u3.k2.y1,d:r128.w128.s4.u1.k2.y1"
mkdir -p $OUT/ds
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_LOADS=4096b,4096u RAMP_MV2_BENCH_NAME=ds-group \
  RAMP_MV2_BENCH_VARIANTS=$V timeout 400 build-gpucheck/bench_moe_v2 $OUT/ds 20 > $OUT/ds/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
grep "^| deepseek" $OUT/ds/*.md
