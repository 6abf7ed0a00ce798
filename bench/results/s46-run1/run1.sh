#!/usr/bin/env bash
# s46-run1 call 2 (repo root, carry [".debs"]): where a Qwen3-30B / OLMoE
# layer's time goes *in a stack* (what a forward pass sees), by part.
# Session 45 took the kernel alone apart after a write flush (weights-only
# 38-45 us there, near the read's own single-replay limit); in a stack the
# read alone is 0.94-1.07x the copy floor and the layer 1.4-2.3x, so the
# stack is where the miss is the kernel's. bench_stack --check 0 with every
# kernel compiled with a timing diagnostic (moe_v2.cuh): d0 whole, d3 the
# ring's synchronisation and launch alone (no loads), d2 the weights only,
# d1 weights + token gather + scales, d4 everything but the output's
# reductions. Each run also times select+read and read in its own process.
# Predicted (H100 or H200 alike in shape): Qwen3 64 tokens d0 - select+read
# ~10 us of which d2 - select+read ~4 (the kernel's per-CTA stream slower
# than the bulk read), d3 ~8 us a layer (launch, selection, ring: the fixed
# part), d4 ~ d0 at <= 64 tokens and 3-6 us under it at 256-512.
set -u
fits() { [ $((SECONDS + $1)) -le 560 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s46r1; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s46-run1.tgz -C /tmp s46r1' EXIT
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
  fits 70 "$1 d$3" || return
  RAMP_JIT_DEFINES="RAMP_MV2_DIAG=$3" timeout 100 ./bench_stack --plan $W/plan-$1.json --out-dir $d \
    --tokens $2 --layers 8 --reps 10 --select-pdl 0 --check 0 > $d/out.txt 2>&1
  echo "$1 d$3 exit $? ($SECONDS s)"
}
for dg in 0 3 2 4 1; do run qwen3-30b-ep8-v2 16,64,256,512 $dg; done
for dg in 0 3 2 4; do run olmoe-ep8-v2 16,64,256 $dg; done
echo "== in a stack, us a layer: diag, tokens, routing, pairs, chosen, layer, select+read, read"
for f in $W/*-d*/stack-*.csv; do
  dg=${f%/*}; dg=${dg##*-}
  awk -F, -v dg=$dg '/^#/||/^model/{next} {k=$3" "$4" "$5" "$9; v[k","$7]=$10; ks[k]=1}
    END{for(k in ks) printf "%s %s %s %.1f %.1f %.1f\n", $1, dg, k, v[k",ramp-stack"], v[k",select+read-bulk-stack"], v[k",read-bulk-stack"]}' $f
done | sort -k1,1 -k3,3n -k4,4 -k2,2
