#!/usr/bin/env bash
# s46-run1 call 4 (repo root, carry [".debs"]): call 3 found deeper rings
# no faster (s5/s6 0.5-3 us slower than s4 in every stack), so a CTA's
# stream (~70 GB/s with 24 CTAs) is not held by its bytes in flight. The
# other difference between the layer's stream (d2) and the bulk read it is
# measured against: the weights' layout. Row-major weights reach a stage as
# a 2-D TMA box (128 rows of 128 B, 2 KB apart); in stage units (bench_stack
# --units 1, ramp_layer_desc.weight_units) each stage is one contiguous
# 16 KB bulk copy, as the read's. The same plans, stacks of d0 (whole), d2
# (weights only) and d3 (no loads) with the weights in rows and in units.
# Predicted: units d2 1-3 us under rows d2 where few CTAs stream (16
# tokens), within 1 us at 64-512; d0 follows d2; d3 the same in both.
set -u
fits() { [ $((SECONDS + $1)) -le 560 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s46r3; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s46-run3.tgz -C /tmp s46r3' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # dataset tokens diag units
  local d=$W/$1-d$3-u$4; mkdir -p $d
  fits 60 "$1 d$3 u$4" || return
  RAMP_JIT_DEFINES="RAMP_MV2_DIAG=$3" timeout 90 ./bench_stack --plan $W/plan-$1.json --out-dir $d \
    --tokens $2 --layers 8 --reps 10 --select-pdl 0 --check 0 --units $4 > $d/out.txt 2>&1
  echo "$1 d$3 u$4 exit $? ($SECONDS s)"
}
for u in 0 1; do for dg in 0 2 3; do
  run qwen3-30b-ep8-v2 16,64,256,512 $dg $u; run olmoe-ep8-v2 16,64,256 $dg $u
done; done
echo "== in a stack, us a layer: model tokens routing pairs chosen diag-units | layer | select+read | read"
for f in $W/*-d*-u*/stack-*.csv; do
  dg=${f%/*}; dg=${dg#*-d}
  awk -F, -v dg=d$dg '/^#/||/^model/{next} {k=$1" "$3" "$4" "$5" "$9; v[k","$7]=$10; ks[k]=1}
    END{for(k in ks) printf "%s %s | %.1f | %.1f | %.1f\n", k, dg, v[k",ramp-stack"], v[k",select+read-bulk-stack"], v[k",read-bulk-stack"]}' $f
done | sort -k1,1 -k2,2n -k3,3 -k6,6
