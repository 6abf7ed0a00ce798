#!/usr/bin/env bash
# s46-run1 call 5 (repo root, carry [".debs"]): calls 2-4 put a layer's
# weight stream (d2) at d3 + the bulk read's time: the stream runs at the
# read's rate, and the part that does not overlap it (d3: selection, the
# kernel's head and tail, ~8-11 us a layer against the read's ~2.7) adds.
# HBM is idle while the selection runs (~2.5 us a layer). The layer's L2
# prefetch under the selection (ramp_layer_desc.l2_prefetch_mb: the first
# bytes of every W13 row, where each up tile starts; all of W13 if it fits)
# was slower in single replays after a flush (sessions 11, 24); in a stack
# nothing competes with it. Qwen3-30B and OLMoE EP8 stacks with
# bench_stack --l2pf 0 / 6 / 12 / 24 MB, each with the select_pdl variant.
# Predicted: 12 MB 1-3 us a layer faster at 64-512 tokens uniform, within 1
# us or slower on the skewed loads (idle experts' bytes fetched).
set -u
fits() { [ $((SECONDS + $1)) -le 560 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s46r4; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s46-run4.tgz -C /tmp s46r4' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # dataset tokens l2pf[a|b: the baseline twice, an A/A]
  local d=$W/$1-pf$3; mkdir -p $d
  fits 60 "$1 pf$3" || return
  timeout 90 ./bench_stack --plan $W/plan-$1.json --out-dir $d --tokens $2 --layers 8 --reps 10 \
    --select-pdl 1 --l2pf ${3%[ab]} > $d/out.txt 2>&1
  echo "$1 l2pf $3 exit $? ($SECONDS s)"
}
for pf in 0a 12 6 24 0b; do
  run qwen3-30b-ep8-v2 16,64,256,512 $pf; run olmoe-ep8-v2 16,64,256 $pf
done
echo "== in a stack, us a layer: model tokens routing pairs chosen pf | layer | select_pdl | select+read | read"
for f in $W/*-pf*/stack-*.csv; do
  pf=${f%/*}; pf=${pf##*-}
  awk -F, -v pf=$pf '/^#/||/^model/{next} {k=$1" "$3" "$4" "$5" "$9; v[k","$7]=$10; ks[k]=1}
    END{for(k in ks) printf "%s %s | %.1f | %.1f | %.1f | %.1f\n", k, pf, v[k",ramp-stack"], v[k",ramp-stack-selpdl"], v[k",select+read-bulk-stack"], v[k",read-bulk-stack"]}' $f
done | sort -k1,1 -k2,2n -k3,3 -k6,6
