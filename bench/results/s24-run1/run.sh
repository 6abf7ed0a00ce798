#!/usr/bin/env bash
# s24-run1: the L2 prefetch under the selection as a strip (session 24): the
# first bytes of every W13 row, where every up tile starts, instead of W13's
# first bytes (session 12: those made Qwen3-30B's layer slower). Correct
# first: test_gpu_layer (kernel v2, FP8 and BF16) with 1 MB (a strip on
# every test layer) and 24 MB, memcheck with 1 MB. Then bench_layer, rows
# ramp-l2pf beside ramp: Mixtral-8x22B EP8 (one local expert of 302 MB: a
# 768-byte strip at 24 MB) with 8 and 24 MB, Qwen3-30B EP8 (50 MB of W13)
# with 24 MB, OLMoE EP8 (32 MB of W13) with 16 MB (plan: `ramp fit
# data/timing/olmoe-ep8-v2.safetensors`, here).
set -u
O=${OUT:-/tmp/out}; R=bench/results/s24-run1; W=/tmp/s24r1; mkdir -p $W
tools/gpu-check env deps > $W/env.log 2>&1
tools/gpu-check build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
for mb in 1 24; do
  (cd build-gpucheck && RAMP_TEST_TMP=/tmp/s24tt RAMP_LAYER_KERNEL=v2 RAMP_LAYER_L2PF=$mb \
    timeout 240 ./test_gpu_layer) > $W/layer-l2pf$mb.txt 2>&1
  echo "test_gpu_layer l2pf $mb exit $?"
done
(cd build-gpucheck && RAMP_TEST_TMP=/tmp/s24tt RAMP_LAYER_KERNEL=v2 RAMP_LAYER_L2PF=1 RAMP_LAYER_KINDS=fp8 \
  RAMP_LAYER_ROUTINGS=3 RAMP_LAYER_SHAPES=2 timeout 200 compute-sanitizer --tool memcheck \
  --error-exitcode 3 ./test_gpu_layer) > $W/layer-l2pf1-memcheck.txt 2>&1
echo "memcheck l2pf 1 exit $? ($(grep -m1 'ERROR SUMMARY' $W/layer-l2pf1-memcheck.txt))"
MX="--plan $R/plan-mixtral-8x22b-ep8.json --dataset data/timing/mixtral-8x22b-ep8-v2.safetensors"
QW="--plan $R/plan-qwen3-30b-ep8-tx.json --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors"
run_bench() { # name, args...
  local n=$1; shift
  mkdir -p $W/$n
  ./build-gpucheck/bench_layer "$@" --out-dir $W/$n --reps 20 --kernel v2 --flush read > $W/$n/log.txt 2>&1
  echo "bench $n exit $?"
}
run_bench mixtral-l2pf8 $MX --tokens 64,128,256,512,1024 --l2pf 8
run_bench mixtral-l2pf24 $MX --tokens 64,128,256,512,1024 --l2pf 24
run_bench qwen3-l2pf24 $QW --tokens 64,256,1024,4096 --l2pf 24
run_bench olmoe-l2pf16 --plan $R/plan-olmoe-ep8.json --dataset data/timing/olmoe-ep8-v2.safetensors \
  --tokens 64,256,1024 --l2pf 16
tar czf $O/s24-run1.tgz -C /tmp s24r1
# ramp and ramp-l2pf medians per load
for n in mixtral-l2pf8 mixtral-l2pf24 qwen3-l2pf24 olmoe-l2pf16; do
  echo "== $n"; f=$(ls $W/$n/*.csv | grep -v sweep | head -1)
  python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
t = {}
for r in rows:
    if r.get('impl') in ('ramp', 'ramp-l2pf'):
        t.setdefault((r['tokens'], r['routing']), {})[r['impl']] = float(r['us_median'])
for k, v in t.items():
    print(k[0], k[1], v.get('ramp'), v.get('ramp-l2pf'))
PY
done
