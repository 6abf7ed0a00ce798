#!/usr/bin/env bash
# s39-run1 call 7: does the power regime change which configuration is
# best? The timing datasets the cost model ranks from are measured one launch
# after a flush (burst: the limiter has room); served layers run back to
# back (sustained: at the cap). Five DeepSeek-V3 configurations on 4,096
# balanced and random, four Mixtral ones on 128 and 256 pairs, each timed
# with the read flush (100 reps) and back to back (1,500 reps), twice
# (a, b), the samples beside. Predicted: the same best on every load, the
# margins moving by a few percent (configurations streaming more per FLOP
# lose more at the cap).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r7; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s39-run1-call7.tgz -C /tmp s39r7' EXIT
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
Q=timestamp,power.draw.instant,power.draw,clocks.sm,clocks.mem,clocks_event_reasons.active,temperature.gpu
TZ=UTC nvidia-smi --query-gpu=$Q --format=csv,nounits -lms 20 > $W/smi.csv 2>$W/smi.err &
SMI=$!
DV=d:r128.w128.s3.t3.u1.y1,d:r128.w128.s4.t3.u1.y1,d:r128.w256.s3.t3.u1.y1,d:r64.w128.s4.t3.u1,d:r64.w256.s4.t3.u1
MV=m:r128.w128.s3.t3.u1.k4.y1,m:r128.w128.s4.t3.u1.k2.m1.y1,m:r64.w128.s4.t3.u1.k4,m:r32.w128.s4.t3.u1.k4
cd build-gpucheck
for run in a b; do
  for m in d m; do
    if [ $m = d ]; then V=$DV L=4096b,4096u; else V=$MV L=m128,m256; fi
    for f in read none; do
      reps=100; [ $f = none ] && reps=1500
      o=$W/$run-$m-$f; mkdir -p $o
      RAMP_MV2_BENCH_FLUSH=$f RAMP_MV2_BENCH_NAME=$f RAMP_MV2_BENCH_VARIANTS=$V RAMP_MV2_BENCH_LOADS=$L \
        timeout 150 ./bench_moe_v2 $o $reps > $o/bench.txt 2>&1
      echo "$run $m $f exit $?"
    done
  done
done
kill $SMI; sleep 0.2; cd ..
for run in a b; do for m in d m; do for f in read none; do
  grep wall $W/$run-$m-$f/bench.txt | awk -v t="$run $f" '{print t, $1, $3, $4, $5}'
done; done; done
python3 bench/power_join.py $W/smi.csv --settle 0.3 $(for x in $W/*-none/bench.txt; do echo --moe $x; done) --out $W/power.md
echo "power_join exit $?"; cat $W/power.md
