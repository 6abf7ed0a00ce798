# s19-run7: A/B of s19-run6's idle skip: each variant with and without (.d10 turns it
# off, results still right), kernel alone, L2 emptied by a read.
set -u
[ -x build-gpucheck/bench_moe_v2 ] && [ build-gpucheck/bench_moe_v2 -nt kernels/moe_v2_wide.cuh ] ||
  tools/gpu-check env deps build > $OUT/gc-build.txt 2>&1
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
V=""
for v in d:r128.w128.s4.u1.y1 d:r128.w256.s3.u1.y1 d:r128.w128.s4.u2.y1 m:r128.w128.s4.u1.y1 m:r128.w128.s4.u1.k2.y1.m1; do
  V="$V,$v,$v.d10,$v"
done
mkdir -p $OUT/ds
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_LOADS=4096b,4096u,m512,m1024 RAMP_MV2_BENCH_NAME=idle-ab \
  RAMP_MV2_BENCH_VARIANTS=${V#,} timeout 300 build-gpucheck/bench_moe_v2 $OUT/ds 20 > $OUT/ds/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
grep -E " us " $OUT/ds/bench.txt
