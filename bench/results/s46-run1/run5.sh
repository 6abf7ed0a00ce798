#!/usr/bin/env bash
# s46-run1 call 6 (repo root, carry [".debs"]): calls 2-5 put 5.5-8.5 us a
# layer of a small layer's time in a stack in the part of the kernel that no
# load overlaps (d3 - the floor's 2.5-3 us), and the L2 prefetch under the
# selection moved it by <= 1.6 us. Where is it? bench_stack --timeline 1
# (new): every kernel stamps %globaltimer (kernels/timeline.cuh; new events
# 6 first weights requested, 7 first stage landed), and per load one replay
# of the 8-layer stack leaves the last layer's stamps (run right after the
# layer before it), then one single layer after the read flush. Qwen3-30B
# and OLMoE EP8, the plan's choices whole (d0) and without loads (d3).
# Predicted (Qwen3 64 uniform, d0, us after the last layer's selection
# starts): selection ends ~2.5; the MoE kernel past its wait ~3; first
# weights requested ~3.5 (median block); first stage landed ~5; the last
# block ends ~35 with the median ~2 us earlier; so ~3-4 us of head before
# the first bytes land and ~2 of tail.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s46r5; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s46-run5.tgz -C /tmp s46r5' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # dataset tokens diag
  local d=$W/$1-d$3; mkdir -p $d
  RAMP_JIT_DEFINES="RAMP_MV2_DIAG=$3" timeout 120 ./bench_stack --plan $W/plan-$1.json --out-dir $d \
    --tokens $2 --layers 8 --reps 10 --select-pdl 0 --check $([ $3 = 0 ] && echo 1 || echo 0) \
    --timeline 1 > $d/out.txt 2>&1
  echo "$1 d$3 exit $? ($SECONDS s)"
}
run qwen3-30b-ep8-v2 16,64,256,512 0; run qwen3-30b-ep8-v2 16,64,256,512 3
run olmoe-ep8-v2 16,64,256 0; run olmoe-ep8-v2 16,64,256 3
python3 - $W <<'PY'
import csv, glob, os, statistics as S, sys
print("== the last layer of a stack (and one layer after a read flush), us after its selection starts:")
print("   what tokens routing config | sel end | past wait med/max | asked med/max | landed med/max | end med/max")
for f in sorted(glob.glob(sys.argv[1] + "/*-d*/timeline-*.csv")):
    tag = os.path.basename(os.path.dirname(f))
    rows = [r for r in csv.reader(l for l in open(f) if not l.startswith("#"))][1:]
    runs = {}
    for r in rows:
        runs.setdefault(tuple(r[:5]), []).append(r)
    for key, rs in runs.items():
        sel = [r for r in rs if r[5] == "0"]
        t0 = min(int(r[7]) for r in sel) if sel else 0
        sel_end = max(int(r[10]) for r in sel) - t0 if sel else -1
        ker = [r for r in rs if r[5] == "1" and int(r[7]) >= 0]
        def mm(col):
            v = [int(r[col]) - t0 for r in ker if int(r[col]) >= 0]
            return f"{S.median(v)/1e3:5.1f}/{max(v)/1e3:5.1f}" if v else "    -/    -"
        def end(r):
            return max(int(r[c]) for c in (9, 10, 11, 12))
        ends = [end(r) - t0 for r in ker if end(r) >= 0]
        e = f"{S.median(ends)/1e3:5.1f}/{max(ends)/1e3:5.1f}" if ends else "-"
        print(f"{tag:22s} {key[0]:5s} {key[1]:>4s} {key[2]:7s} {key[3]:14s} | {sel_end/1e3:5.1f} | {mm(8)} | {mm(13)} | {mm(14)} | {e}")
PY
