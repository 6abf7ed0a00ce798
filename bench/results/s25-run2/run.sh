#!/usr/bin/env bash
# s25-run2: phase 2 waits for phase 1 after its first weights (session 25).
# The polymorphic kernel's phase-2 kernel no longer waits at its top: its
# producers request the first tile's W2 stages (which do not depend on
# phase 1), then wait (griddepcontrol.wait), then gather the intermediate.
# This matters only when the phase-2 kernel is launched by programmatic
# dependent launch: always for menus of wide two-phase entries (mode 3),
# not by default for menus with a narrow one (mode 1: session 14 measured
# PDL there 2-13 us slower, with the wait at the top).
# Correct first: test_gpu_layer on a menu of narrow and wide two-phase
# entries with both kernels by PDL (RAMP_LAYER_SERIAL=3, the new wait
# active), memcheck on its narrow two-phase entries. Then bench_layer
# --top-wait 1 (rows ramp-topwait and ramp-pdl2-topwait: the old form beside
# the new, same plan and loads, outputs checked): Mixtral-8x22B EP8
# (narrow two-phase entries: ramp-pdl2 vs ramp-pdl2-topwait is the A/B) and
# DeepSeek-V3 EP8 (a wide two-phase entry: ramp vs ramp-topwait).
# Prediction: phase 2's first DRAM round trip (1-3 us) off every two-phase
# load run by PDL; on Mixtral, whether PDL now beats the plain launch.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s25r2; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
MENU=r16.w128.s4.ph2.dk2,r8.w256.s3,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r16.w128.s4.k2
L="RAMP_TEST_TMP=/tmp/s25tt RAMP_LAYER_KERNEL=v2 RAMP_LAYER_SERIAL=3 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$MENU"
(cd build-gpucheck && env $L RAMP_LAYER_ROUTINGS=60 timeout 200 ./test_gpu_layer) > $W/layer-serial3.txt 2>&1
echo "test_gpu_layer serial 3 exit $? ($(grep -E 'check\(s\) failed|all checks passed' $W/layer-serial3.txt | tail -1))"
R=bench/results
run_bench() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  mkdir -p $W/$n
  timeout $t ./build-gpucheck/bench_layer "$@" --out-dir $W/$n --reps 20 --kernel v2 --flush read \
    --top-wait 1 > $W/$n/log.txt 2>&1
  echo "bench $n exit $?"
}
run_bench mixtral 170 --plan $R/s24-run1/plan-mixtral-8x22b-ep8.json \
  --dataset data/timing/mixtral-8x22b-ep8-v2.safetensors --tokens 64,128,256,512
(cd build-gpucheck && env $L RAMP_LAYER_ROUTINGS=1 RAMP_LAYER_SHAPES=1 RAMP_LAYER_ENTRIES=0,2,4 \
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) > $W/layer-serial3-memcheck.txt 2>&1
echo "memcheck exit $? ($(grep -m1 'ERROR SUMMARY' $W/layer-serial3-memcheck.txt))"
run_bench deepseek 110 --plan $R/s22-run4/plan-deepseek-v3-ep8.json \
  --dataset data/timing/deepseek-v3-ep8-v2.safetensors --tokens 256,1024,4096
tar czf $O/s25-run2.tgz -C /tmp s25r2
for n in mixtral deepseek; do
  echo "== $n"; f=$(ls $W/$n/*.csv 2>/dev/null | grep -v sweep | head -1); [ -n "$f" ] || continue
  python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
imp = ('ramp', 'ramp-topwait', 'ramp-pdl1', 'ramp-pdl2', 'ramp-pdl2-topwait')
t = {}
for r in rows:
    if r.get('impl') in imp:
        t.setdefault((r['tokens'], r['routing'], r['local_pairs']), {})[r['impl']] = float(r['us_median'])
print('tokens routing pairs', *imp)
for k, v in t.items():
    print(*k, *[v.get(i) for i in imp])
PY
  echo "output checks: $(grep -c 'check:' $W/$n/log.txt), failing: $(grep 'check:' $W/$n/log.txt | grep -vc ' 0 beyond')"
done
