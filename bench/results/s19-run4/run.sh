# s19-run4: where DeepSeek-V3 EP8 4,096 pairs' time goes (1.89x its memory floor in
# s18-run5): r128.w128.s4 and r128.w256.s3 two-phase with tokens by TMA (.u1.y1),
# each launch alone (.u2 up, .u3 down) and the up launch's timing diagnostics
# (.d1 loads alone, .d2 weights alone, .d6 math alone, .d7 math + weights), L2
# emptied by a read; SM clock and power sampled every 50 ms meanwhile (read only).
set -u
[ -x build-gpucheck/bench_moe_v2 ] || tools/gpu-check env deps build > $OUT/gc-build.txt 2>&1
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 50 > $OUT/clocks.csv 2>&1 &
smi=$!
V=""
for w in w128.s4 w256.s3; do
  for u in u1 u2 u3 u2.d1 u2.d2 u2.d6 u2.d7 u3.d1 u3.d6; do V="$V,d:r128.$w.$u.y1"; done
done
V=${V#,}
mkdir -p $OUT/ds
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_LOADS=4096b RAMP_MV2_BENCH_NAME=ds-diag \
  RAMP_MV2_BENCH_VARIANTS=$V timeout 400 build-gpucheck/bench_moe_v2 $OUT/ds 20 > $OUT/ds/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
kill $smi
cat $OUT/ds/*.md | tail -40
