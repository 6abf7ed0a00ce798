#!/usr/bin/env bash
# s35-run1 call 6: Mixtral-8x22B EP8's FP8 stage-unit dataset re-measured on
# the space that now holds the 5-part two-phase entries (k_parts_offered:
# 3 narrow + 18 wide configurations more, 175 in all), same traces and
# batches as the shipped one (session 32: 154 configurations, 195.8 s).
set -u
DATASETS="mixtral-8x22b:EP8:8:v2" DATASETS_UNITS=1 DATASETS_SECONDS=380 \
  tools/gpu-check env deps build datasets
