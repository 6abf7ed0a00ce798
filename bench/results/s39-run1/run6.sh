#!/usr/bin/env bash
# s39-run1 call 6: gpu-check's power step as shipped (bench_wgmma --warmup-s 2,
# power_join --settle 0.5), three times: (a) v2's wide-stage rhythm with its
# weights from L2 (.t) and from HBM (.h), one and two consumer warpgroups
# (128 and 256 FLOP a weight byte), then kernel v2 on DeepSeek-V3 4,096
# balanced and random (whole, up launch, down launch); (b) Mixtral-8x22B 16
# and 64 pairs on the narrow entry, (c) 128 and 256 pairs on the wide one,
# each window >= 1 s, back to back. Predicted: call 4's numbers within 2%
# for (a); (b) at 1,980 MHz without a cap reason (call 5), (c) at the cap.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r6; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s39-run1-call6.tgz -C /tmp s39r6' EXIT
D=d:r128.w128.s3.t3.u1.y1
POWER_WGMMA_ARGS="--forms ss.a2.t,ss.a2.h,ss.a2.pr.t,ss.a2.pr.h,ss.a2.pp.t,ss.a2.pp.h --n 64,128 --w 1,2 --grids 1 --reps 40 --target-ms 25" \
  POWER_MOE_LOADS=4096b,4096u tools/gpu-check env deps build power > $W/a.txt 2>&1
echo "a exit $?"; cp -r build-gpucheck-logs $W/a
sed -n '/^power (exit/,$p' $W/a/tables.txt
ONE="--forms ss.a2.t --n 128 --w 2 --grids 1 --reps 40 --target-ms 25"
POWER_WGMMA_ARGS="$ONE" POWER_MOE_VARIANTS=m:r32.w128.s4.u1.k4 POWER_MOE_LOADS=m16,m64 POWER_MOE_REPS=15000 \
  tools/gpu-check power > $W/b.txt 2>&1
echo "b exit $?"; cp -r build-gpucheck-logs $W/b
sed -n '/^power (exit/,$p' $W/b/tables.txt | grep -E "mixtral|idle"
POWER_WGMMA_ARGS="$ONE" POWER_MOE_VARIANTS=m:r128.w128.s3.u1.k4 POWER_MOE_LOADS=m128,m256 POWER_MOE_REPS=8000 \
  tools/gpu-check power > $W/c.txt 2>&1
echo "c exit $?"; cp -r build-gpucheck-logs $W/c
sed -n '/^power (exit/,$p' $W/c/tables.txt | grep -E "mixtral|idle"
