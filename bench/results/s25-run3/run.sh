#!/usr/bin/env bash
# s25-run3: the late wait (s25-run2) on more menus and loads. Correct:
# test_gpu_layer with both kernels by PDL (RAMP_LAYER_SERIAL=3) on the split
# tests' FP8 menu (fused narrow and .tx entries, split-K, a narrow
# two-phase entry, a wide two-phase .mc.tx one) and BF16 menu (wide
# two-phase entries, one .mc), racecheck on the narrow and wide two-phase
# entries. Then the A/B again on other loads (--seed 2): Qwen3-30B EP8 (the
# plan with r128.w128.s4.ph2.tx, launched by PDL in both kernels) and
# DeepSeek-V3 EP8, rows ramp (new) and ramp-topwait (old).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s25r3; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
FP8=r8.w128.s4,r32.w256.s4,r16.w128.s4.ph2.dk2,r128.w128.s4.ph2.dk2.mc.tx,r128.w256.s3.tx,r16.w128.s4.k2
BF=r8.w256.s4,r32.w256.s3,r128.w128.s4.ph2.dk2,r128.w256.s3.ph2.mc,r128.w256.s3,r64.w128.s4
L="RAMP_TEST_TMP=/tmp/s25tt RAMP_LAYER_KERNEL=v2 RAMP_LAYER_SERIAL=3"
for kind in fp8 bf16; do
  menu=$FP8; [ $kind = bf16 ] && menu=$BF
  (cd build-gpucheck && env $L RAMP_LAYER_KINDS=$kind RAMP_LAYER_MENU=$menu RAMP_LAYER_ROUTINGS=60 \
    timeout 150 ./test_gpu_layer) > $W/layer-serial3-$kind.txt 2>&1
  echo "test_gpu_layer serial 3 $kind exit $? ($(grep -E 'check\(s\) failed|all checks passed' $W/layer-serial3-$kind.txt | tail -1))"
done
(cd build-gpucheck && env $L RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$FP8 RAMP_LAYER_ROUTINGS=1 \
  RAMP_LAYER_SHAPES=1 RAMP_LAYER_ENTRIES=2,3 timeout 120 compute-sanitizer --tool racecheck \
  --error-exitcode 3 ./test_gpu_layer) > $W/layer-serial3-racecheck.txt 2>&1
echo "racecheck exit $? ($(grep -m1 'RACECHECK SUMMARY' $W/layer-serial3-racecheck.txt))"
R=bench/results
run_bench() { # name, timeout, args...
  local n=$1 t=$2; shift 2
  mkdir -p $W/$n
  timeout $t ./build-gpucheck/bench_layer "$@" --out-dir $W/$n --reps 30 --seed 2 --kernel v2 \
    --flush read --top-wait 1 > $W/$n/log.txt 2>&1
  echo "bench $n exit $?"
}
run_bench qwen3 120 --plan $R/s24-run1/plan-qwen3-30b-ep8-tx.json \
  --dataset $R/s20-run5/qwen3-30b-ep8-v2.safetensors --tokens 1024,2048,4096
run_bench deepseek 120 --plan $R/s22-run4/plan-deepseek-v3-ep8.json \
  --dataset data/timing/deepseek-v3-ep8-v2.safetensors --tokens 512,2048,4096
tar czf $O/s25-run3.tgz -C /tmp s25r3
for n in qwen3 deepseek; do
  echo "== $n"; f=$(ls $W/$n/*.csv 2>/dev/null | grep -v sweep | head -1); [ -n "$f" ] || continue
  python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
imp = ('ramp', 'ramp-topwait', 'ramp-pdl1', 'ramp-pdl2', 'ramp-pdl2-topwait')
t = {}
for r in rows:
    if r.get('impl') in imp:
        t.setdefault((r['tokens'], r['routing'], r['local_pairs'], r['config']), {})[r['impl']] = float(r['us_median'])
print('tokens routing pairs config', *imp)
for k, v in t.items():
    print(*k, *[v.get(i) for i in imp])
PY
  echo "output checks: $(grep -c 'check:' $W/$n/log.txt), failing: $(grep 'check:' $W/$n/log.txt | grep -vc ' 0 beyond')"
done
