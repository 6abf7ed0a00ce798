#!/usr/bin/env bash
# s46-run1 call 3 (repo root, carry [".debs"]): call 2 found a Qwen3-30B
# layer's weights, streamed through its ring alone (d2), 5-9 us over the
# selection + a bulk read of the same bytes in a stack, most where few CTAs
# stream (16 tokens skewed: 24 CTAs at ~70 GB/s each, 4 x 35 KB in
# flight). Are deeper rings or more CTAs a lever there? (a) rings of 5 and 6
# stages (names may say them since this session; not in the space) checked:
# test_gpu_moe_v2 RAMP_MOE_V2_STAGES=6 and 5 on Qwen3-30B and OLMoE against
# the CPU reference and v1, then memcheck. (b) one-entry plans (plans/,
# `ramp fit --menu 1 --include C`, the s5/s6 ones renamed by hand, no
# checksum) in stacks: each configuration forced, in a stack and alone after
# a read flush, the same loads as call 2.
# Predicted: (a) 0 violations, memcheck 0 errors. (b) Qwen3 16 tokens skewed
# s6 ~3 us faster than s4 in a stack, .k2 2-4 us faster; 64 uniform (96
# CTAs, HBM-bound) within +-1 us; OLMoE 16 tokens s6 or .k2 1-3 us faster.
set -u
fits() { [ $((SECONDS + $1)) -le 560 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s46r2; rm -rf $W; mkdir -p $W/test $W/stack
trap 'tar czf $O/s46-run2.tgz -C /tmp s46r2' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
P=$PWD/bench/results/s46-run1/plans
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp; mkdir -p $RAMP_TEST_TMP
for st in 6 5; do
  fits 120 "test s$st" || break
  RAMP_MOE_V2_STAGES=$st RAMP_MOE_V2_MODELS=qwen3-30b,olmoe timeout 150 ./test_gpu_moe_v2 > $W/test/s$st.txt 2>&1
  echo "test_gpu_moe_v2 stages $st exit $?"; grep -E "^test_gpu_moe_v2|violation|differ" $W/test/s$st.txt | tail -3
done
fits 90 memcheck && RAMP_MOE_V2_STAGES=6 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s6,r8.w128.s6.k2 \
  RAMP_MOE_V2_NO_V1=1 RAMP_MOE_TOKENS=48 timeout 120 compute-sanitizer --tool memcheck ./test_gpu_moe_v2 \
  > $W/test/memcheck-s6.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|^test_gpu_moe_v2" $W/test/memcheck-s6.txt | tail -2
for f in $P/*.json; do
  b=$(basename $f .json); case $b in qwen3*) tok=16,64,256 ;; *) tok=16,64 ;; esac
  fits 40 "$b" || continue
  mkdir -p $W/stack/$b
  timeout 60 ./bench_stack --plan $f --out-dir $W/stack/$b --tokens $tok --layers 8 --reps 10 \
    --select-pdl 0 > $W/stack/$b/out.txt 2>&1
  echo "$b exit $? ($SECONDS s)"
done
echo "== forced, us a layer: model tokens routing pairs config | stack | one (read flush) | select+read stack"
for f in $W/stack/*/stack-*.csv; do
  awk -F, '/^#/||/^model/{next} {k=$1" "$3" "$4" "$5" "$9; v[k","$7]=$10; ks[k]=1}
    END{for(k in ks) printf "%s | %.1f | %.1f | %.1f\n", k, v[k",ramp-stack"], v[k",ramp"], v[k",select+read-bulk-stack"]}' $f
done | sort -k1,1 -k2,2n -k3,3 -k7,7n
