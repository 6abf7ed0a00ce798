#!/usr/bin/env bash
# s48-run1 call 1 (repo root, carry [".debs"]; written in session 48, which
# had no device: to run in the next session that has one). Two switches
# built this session, both off by default:
# RAMP_MV2_EARLY_HEAD=1: the first tile's head stages asked for in the
# set-up. Session 47's timeline: after the entry's set-up, the block
# barrier (0.1-0.4 us), setmaxnreg (0.15-0.6) and the producer's way to its
# first request (0.65-1.25) pass before the first weights are asked for,
# and session 46 found that the part of the kernel with no loads (d3) does
# not overlap the stream. Thread 0 knows the expert and slice at the set-up
# and the ring is new, so it can ask right after making the barriers.
# RAMP_MV2_DYN=1: tiles after a block's first claimed from a counter, not
# taken by stride (timed in run2.sh; checked here).
# (a) correct with both on: test_gpu_moe_v2 (Qwen3-30B and OLMoE, every
# configuration against the CPU reference and v1, each routing also on a
# 7-block grid, where every block claims; DeepSeek-V3 on five
# configurations; Qwen3 in two launches (SPLIT, narrow and wide phase 2),
# with grouped tile order (GROUP=4) and .gg (left static by DYN));
# test_gpu_layer (default and .tx menus); memcheck and racecheck on narrow,
# split-K and two-phase entries. Then EARLY_HEAD alone on Qwen3 (its
# correctness apart from DYN's, should (a) fail).
# (b) EARLY_HEAD A/B/A/B in stacks (0 and 1, DYN off), Qwen3/OLMoE (with a
# timeline each), Mixtral-8x22B and DeepSeek-V3.
# Predicted: (a) every check holds, 0 memcheck/racecheck errors; (b) the
# first request 0.5-1.5 us earlier after the wait on non-multicast entries
# (timeline), the layer 0.5-1.5 us faster on Qwen3/OLMoE 16-256 tokens,
# ~0 where a multicast entry is chosen, never slower beyond the A/A spread
# (~0.5 us). If the request moves and the layer does not, the stream's
# start is not what the head delays.
DEFINES="RAMP_MV2_EARLY_HEAD=1 RAMP_MV2_DYN=1" # ramp_check's; bench_stack's below set their own
source bench/device_run.sh s48-run1
t() { ramp_check "$@"; }
t moe-v2 170 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-dsv3 90 RAMP_MOE_V2_MODELS=deepseek-v3 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r8.w512.s4,r16.w256.s4,r128.w256.s3,r128.w512.s3.ph2.dk2 ./test_gpu_moe_v2
t moe-v2-split 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_SPLIT=1 ./test_gpu_moe_v2
t moe-v2-group 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GROUP=4 ./test_gpu_moe_v2
t moe-v2-gg 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GGATHER=2 ./test_gpu_moe_v2
TX=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
t layer-default 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
t layer-tx 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 RAMP_LAYER_MENU=$TX ./test_gpu_layer
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2,r128.w128.s4.ph2 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t racecheck 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4 RAMP_MOE_TOKENS=12 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2
DEFINES="RAMP_MV2_EARLY_HEAD=1"
t moe-v2-early 90 RAMP_MOE_V2_MODELS=qwen3-30b ./test_gpu_moe_v2
ramp_fit_plans qwen3-30b-ep8-v2 olmoe-ep8-v2 mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2
run() { ramp_stack "$1" "$2" "$3" "RAMP_MV2_EARLY_HEAD=$4" "$5" 10; } # tag plan tokens early timeline
for ab in a b; do
  run qwen3-e0-$ab qwen3-30b-ep8-v2 16,64,256,512 0 0; run qwen3-e1-$ab qwen3-30b-ep8-v2 16,64,256,512 1 0
  run olmoe-e0-$ab olmoe-ep8-v2 16,64,256 0 0; run olmoe-e1-$ab olmoe-ep8-v2 16,64,256 1 0
done
run qwen3-e0-tl qwen3-30b-ep8-v2 16,64,256 0 1; run qwen3-e1-tl qwen3-30b-ep8-v2 16,64,256 1 1
run olmoe-e0-tl olmoe-ep8-v2 16,64,256 0 1; run olmoe-e1-tl olmoe-ep8-v2 16,64,256 1 1
run mixtral-e0 mixtral-8x22b-ep8-v2 16,64,256 0 0; run mixtral-e1 mixtral-8x22b-ep8-v2 16,64,256 1 0
run dsv3-e0 deepseek-v3-ep8-v2 16,64,256 0 0; run dsv3-e1 deepseek-v3-ep8-v2 16,64,256 1 0
for f in $W/*-e[01]*/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f; done
python3 ../bench/timeline_head.py $W > $W/head.txt
grep -E " stack .* uniform" $W/head.txt | cut -c1-29,36-70,168-
