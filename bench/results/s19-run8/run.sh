# s19-run8: bench_layer --wide on a plan that already holds a tile and its .mc.tx
# (the BF16 Mixtral plan): the mctx variant is now skipped with a message (da50aa5)
# instead of failing the run, and the tx rows are timed.
LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_MODELS=mixtral-8x22b-ep8-v2-bf16 LAYER_FLUSH=read LAYER_WIDE=tx,mctx \
  timeout 150 tools/gpu-check env deps build bench_layer > $OUT/gc.txt 2>&1
