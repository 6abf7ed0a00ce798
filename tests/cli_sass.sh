#!/usr/bin/env bash
# The compiled kernels' measured resources and SASS: `ramp configs --ptxas`
# and tools/sass-check. First the checker's rules against a stand-in
# disassembler (canned SASS, no CUDA needed): QGMMA / HGMMA required, LDL
# and STL refused, multicast programs' TMA multicast and no GPU-scope fence
# outside a cluster barrier, kernel v2 without FCHK, --expect, --table,
# every usage error. Then, where NVRTC and a disassembler are installed,
# every configuration of kernel v2's space for Qwen3-30B EP8 compiled as
# the GPU path compiles it: none may spill, keep a stack frame or draw a
# warning, each cubin must hold QGMMA and no local memory; a failed compile
# leaves no cubin folder behind. And
# `ramp configs --plan`: the polymorphic kernel of a plan `ramp fit` makes
# from the shipped DeepSeek-V3 v2 dataset (a two-phase entry in its menu:
# two kernels), as compiled for the layer, with and without red4 (W2 permuted),
# without FCHK, and with the exact SiLU and FP8 scale (FCHK back, refused).
# Args: path of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"
check=$2/tools/sass-check

# ---- the rules, on canned SASS (the stand-in prints the "cubin" itself)
mkdir -p "$tmp/fake" "$tmp/c" "$tmp/empty"
printf '#!/bin/sh\ncat "$1"\n' > "$tmp/fake/nvdisasm"
chmod +x "$tmp/fake/nvdisasm"
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  RED.E.ADD.F32 [R2], R5\n' > "$tmp/c/fp8-good.cubin"
# code size and FCHK (measures, no rule): 64 addressed instructions = 1.0 KB
{ for i in $(seq 0 61); do printf '        /*%04x*/   FFMA R4, R5, R6, R7 ;\n' $((i * 16)); done
  printf '        /*03e0*/   FCHK P0, R3, 448 ;\n        /*03f0*/   QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24 ;\n'
} > "$tmp/sized-fp8.cubin"
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  STL [R1+0x10], R7\n' > "$tmp/c/fp8-spill.cubin"
printf '  HGMMA.64x32x16.F32.BF16 R24, gdesc[UR4], R24\n' > "$tmp/c/x-bf16.cubin"
printf '  HMMA.16816.F32.BF16 R4, R8, R12, R4\n  LDL.64 R2, [R1]\n' > "$tmp/c/mma-local.cubin"
printf '  HMMA.16816.F32.BF16 R4, R8, R12, R4\n' > "$tmp/d.cubin"
# kernel v2's multicast programs ("-mc" in the name) must multicast
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  UTMALDG.2D.MULTICAST [UR8], [UR14], UR12 ;\n' > "$tmp/m-fp8-mc.cubin"
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  UTMALDG.2D [UR8], [UR12] ;\n' > "$tmp/n-fp8-mc-ph1.cubin"
# stage units: a multicast program reads them by the bulk copy (UBLKCP), with
# MULTICAST; a plain bulk copy is not one
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  UBLKCP.S.G.MULTICAST [UR10], [UR6], UR8 ;\n' > "$tmp/u-fp8-units-mc.cubin"
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  UBLKCP.S.G [UR10], [UR6], UR8 ;\n' > "$tmp/v-fp8-units-mc.cubin"
# ... and fence at GPU scope only inside a cluster barrier: a release.cluster
# arrival in the ring (s16-run1) is refused, the cluster barrier's kept
printf '  MEMBAR.ALL.GPU ;\n  ERRBAR;\n  CGAERRBAR ;\n  UCGABAR_ARV ;\n  UTMALDG.2D.MULTICAST [UR8], [UR14], UR12 ;\n  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n' > "$tmp/b-fp8-mc.cubin"
printf '  UTMALDG.2D.MULTICAST [UR8], [UR14], UR12 ;\n  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  @!P0 MEMBAR.ALL.GPU ;\n  @!P0 ERRBAR;\n  @!P0 CGAERRBAR ;\n  @!P0 SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [R9+URZ], RZ ;\n  BRA 0x1c00 ;\n  EXIT ;\n' > "$tmp/f-fp8-mc.cubin"
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  MEMBAR.ALL.GPU ;\n' > "$tmp/g-fp8-mc-k2-ph2.cubin"
# kernel v2's programs ("moe2-", "poly-v2") must hold no FCHK; others may
printf '  QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24\n  FCHK P0, R3, 448 ;\n' > "$tmp/moe2-r8w128s4-fp8.cubin"
cp "$tmp/moe2-r8w128s4-fp8.cubin" "$tmp/poly-v2-qwen3-30b.cubin"
cp "$tmp/moe2-r8w128s4-fp8.cubin" "$tmp/moe1-r8w128s4-fp8.cubin"
fake() { PATH="$tmp/fake:$PATH" "$check" "$@"; }

expect 0 "fp8-good: QGMMA 1, HGMMA 0, LDL/STL 0, RED 1 .vector 0., multicast 0, GPU fences 0, code 0.0 KB, FCHK 0$" -- fake "$tmp/c/fp8-good.cubin"
expect 0 "m-fp8-mc: .*multicast 1, GPU fences 0, code 0.0 KB, FCHK 0$" -- fake "$tmp/m-fp8-mc.cubin"
expect 1 "n-fp8-mc-ph1: .*multicast 0, GPU fences 0, .*   BAD: .*a multicast TMA load" -- fake "$tmp/n-fp8-mc-ph1.cubin"
expect 0 "u-fp8-units-mc: .*multicast 1, GPU fences 0, code 0.0 KB, FCHK 0$" -- fake "$tmp/u-fp8-units-mc.cubin"
expect 1 "v-fp8-units-mc: .*multicast 0, .*   BAD: .*a multicast TMA load" -- fake "$tmp/v-fp8-units-mc.cubin"
expect 0 "b-fp8-mc: .*multicast 1, GPU fences 0, code 0.0 KB, FCHK 0$" -- fake "$tmp/b-fp8-mc.cubin"
expect 1 "f-fp8-mc: .*multicast 1, GPU fences 1, .*   BAD: .*no GPU-scope fence outside a cluster barrier" -- \
  fake "$tmp/f-fp8-mc.cubin"
expect 1 "g-fp8-mc-k2-ph2: .*GPU fences 1, .*   BAD" -- fake "$tmp/g-fp8-mc-k2-ph2.cubin"
expect 0 "2 cubins, 0 breaking" -- fake "$tmp/c/fp8-good.cubin" "$tmp/c/x-bf16.cubin"
expect 1 "fp8-spill: QGMMA 1, HGMMA 0, LDL/STL 1.*BAD" -- fake "$tmp/c/fp8-spill.cubin"
expect 1 "mma-local: .*LDL/STL 1.*BAD: want none" -- fake --expect none "$tmp/c/mma-local.cubin"
expect 0 "d: QGMMA 0, HGMMA 0, LDL/STL 0" -- fake --expect none "$tmp/d.cubin"
expect 1 "d: QGMMA 0.*BAD: want QGMMA" -- fake "$tmp/d.cubin"
expect 1 "d: .*BAD: want HGMMA" -- fake --expect HGMMA "$tmp/d.cubin"
expect 0 "x-bf16: QGMMA 0, HGMMA 1, LDL/STL 0, RED 0 .vector 0., multicast 0, GPU fences 0, code 0.0 KB, FCHK 0$" -- fake "$tmp/c/x-bf16.cubin"
expect 0 "sized-fp8: QGMMA 1, .*GPU fences 0, code 1.0 KB, FCHK 1$" -- fake "$tmp/sized-fp8.cubin"
expect 1 "moe2-r8w128s4-fp8: .*FCHK 1   BAD: .*no FCHK .kernel v2." -- fake "$tmp/moe2-r8w128s4-fp8.cubin"
expect 1 "poly-v2-qwen3-30b: .*FCHK 1   BAD: .*no FCHK" -- fake "$tmp/poly-v2-qwen3-30b.cubin"
expect 0 "moe1-r8w128s4-fp8: .*FCHK 1$" -- fake "$tmp/moe1-r8w128s4-fp8.cubin"
# a folder: all four, two of them breaking a rule; the table says which
expect 1 "4 cubins, 2 breaking the rules" -- fake --table "$tmp/t.csv" "$tmp/c"
[ "$(head -1 "$tmp/t.csv")" = "cubin,expect,qgmma,hgmma,ldl_stl,red,red_vector,multicast,gpu_fence,code_kb,fchk,ok" ] ||
  fail "table header: $(head -1 "$tmp/t.csv")"
[ "$(grep -c ',1$' "$tmp/t.csv")" = 2 ] && [ "$(grep -c ',0$' "$tmp/t.csv")" = 2 ] ||
  fail "table rows: $(cat "$tmp/t.csv")"
grep -q '^x-bf16,HGMMA,0,1,0,0,0,0,0,0.0,0,1$' "$tmp/t.csv" || fail "bf16 row: $(cat "$tmp/t.csv")"
grep -q '^fp8-spill,QGMMA,1,0,1,0,0,0,0,0.0,0,0$' "$tmp/t.csv" || fail "spill row: $(cat "$tmp/t.csv")"
expect 2 "--expect XGMMA: expected auto, QGMMA, HGMMA or none" -- fake --expect XGMMA "$tmp/d.cubin"
expect 2 "no cubin or folder given" -- fake
expect 2 "$tmp/nope: no such file or folder" -- fake "$tmp/nope"
expect 2 "unknown option --bogus" -- fake --bogus "$tmp/d.cubin"
expect 1 "no .cubin files in $tmp/empty" -- fake "$tmp/empty"
expect 0 "$tmp/fake/nvdisasm" -- fake --which
expect 0 "usage" -- "$check" --help

# ---- `ramp configs --ptxas`: usage errors need no compiler
expect 2 "--jobs and --cubin-dir go with --ptxas" -- "$ramp" configs --model qwen3-30b --layout EP8 --jobs 2
expect 2 "--ptxas compiles the valid configurations only" -- \
  "$ramp" configs --model qwen3-30b --layout EP8 --ptxas --all
expect 2 "--jobs '0': expected an integer in \[1, 32\]" -- \
  "$ramp" configs --model qwen3-30b --layout EP8 --ptxas --jobs 0
expect 2 "--cubin-dir $tmp/c: not a folder, or not empty" -- \
  "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 --ptxas --cubin-dir "$tmp/c"
expect 2 "--cubin-dir $tmp/d.cubin: not a folder, or not empty" -- \
  "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 --ptxas --cubin-dir "$tmp/d.cubin"
[ "$(ls "$tmp/c" | wc -l)" = 4 ] || fail "a refused --cubin-dir was touched: $(ls "$tmp/c")"
expect 2 "--red4, --csv and --cubin-dir with --plan go with --ptxas" -- \
  "$ramp" configs --plan "$tmp/p.json" --red4
expect 2 "--plan replaces --model, --layout" -- "$ramp" configs --plan "$tmp/p.json" --ptxas --model olmoe
expect 2 "--plan replaces --model, --layout" -- "$ramp" configs --plan "$tmp/p.json" --ptxas --kernel v2
expect 2 "--red4 goes with --plan" -- "$ramp" configs --model olmoe --layout EP8 --ptxas --red4
expect 1 "$tmp/nope.json" -- "$ramp" configs --plan "$tmp/nope.json" --ptxas

# ---- the real thing: NVRTC and a disassembler
export RAMP_PROGRESS=0
out=$("$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 --ptxas --jobs 2 --cubin-dir "$tmp/q" 2>&1)
rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q RAMP_ERR_NO_GPU; then
  echo "cli_sass: no NVRTC here: the compiled checks skipped"
  finish cli_sass
  exit 77
fi
[ $rc = 0 ] || fail "configs --ptxas exited $rc: $out"
echo "$out" | grep -qE "97 configurations, 115 programs compiled by NVRTC .* 0 cannot run as compiled; cubins" ||
  fail "configs --ptxas summary: $out"
"$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 --ptxas --jobs 2 --csv > "$tmp/q.csv" ||
  fail "configs --ptxas --csv exited $?"
# every row: valid, 168 registers per program at entry, no spill, no stack,
# the dynamic layout within the 227 KB an H200 block may have
rows=$(awk -F, 'NR > 1' "$tmp/q.csv" | wc -l)
good=$(awk -F, 'NR > 1 && $2 == 1 && $4 == 168 && ($3 == 1 || $5 == 168) && $6 == 0 && $7 == 0 &&
                $8 == 0 && $9 <= 232448 && $10 <= 232448 && $12 == 1 && $13 == 0' "$tmp/q.csv" | wc -l)
[ "$rows" = 97 ] && [ "$good" = 97 ] || fail "ptxas table: $good of $rows rows as expected: $(cat "$tmp/q.csv")"
grep -q '^r128.w128.s3.ph2.dk2,1,2,168,168,0,0,0,169536,220224,384,1,0,$' "$tmp/q.csv" ||
  fail "two-phase row: $(grep ph2.dk2 "$tmp/q.csv")"
# (each wide tile plain, .tx and .mc.tx: 3 x 3 up programs shared by two K splits)
[ "$(ls "$tmp/q" | wc -l)" = 106 ] || fail "cubins: $(ls "$tmp/q" | wc -l), expected 106 (115 programs, 9 shared up programs)"
if "$check" --which >/dev/null 2>&1; then
  expect 0 "106 cubins, 0 breaking the rules" -- "$check" "$tmp/q"
else
  fail "NVRTC is here but no disassembler: run tools/install-deps"
fi
# a compile that fails (no kernel sources) writes nothing
mkdir -p "$tmp/nokernels"
expect 1 "97 configuration.s. of the space failed to compile.*no cubins written" -- \
  env RAMP_KERNEL_DIR="$tmp/nokernels" "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 \
  --ptxas --cubin-dir "$tmp/fail"
ls -d "$tmp"/fail* >/dev/null 2>&1 && fail "a failed compile left $(ls -d "$tmp"/fail*)"
# a plan's polymorphic kernel
expect 0 "wrote" -- "$ramp" fit "$2/data/timing/deepseek-v3-ep8-v2.safetensors" -o "$tmp/ds.json"
grep -q '\.ph2' "$tmp/ds.json" || fail "the DeepSeek-V3 plan has no two-phase entry: $(grep -o 'r[0-9]*\.w[^"]*' "$tmp/ds.json")"
out=$("$ramp" configs --plan "$tmp/ds.json" --ptxas --cubin-dir "$tmp/pc" 2>&1) || fail "configs --plan exited $?: $out"
for pat in "^ramp_moe_poly_v2 +yes +168 +0/0 +0 +219728 +384" "^ramp_moe_poly_v2_down +yes +168 +0/0 +0 +220224 +384" \
           "can run as compiled; poly.cubin in the --cubin-dir folder"; do
  echo "$out" | grep -qE -- "$pat" || fail "configs --plan lacks /$pat/: $out"
done
out=$("$ramp" configs --plan "$tmp/ds.json" --ptxas --red4 2>&1) || fail "configs --plan --red4 exited $?: $out"
for pat in "kernel v2, W2 permuted \(red4\)" "^ramp_moe_poly_v2 +yes +168 +0/0 +0 " "^ramp_moe_poly_v2_down +yes"; do
  echo "$out" | grep -qE -- "$pat" || fail "configs --plan --red4 lacks /$pat/: $out"
done
"$ramp" configs --plan "$tmp/ds.json" --ptxas --csv > "$tmp/pc.csv" || fail "configs --plan --csv exited $?"
[ "$(wc -l < "$tmp/pc.csv")" = 3 ] && grep -q '^ramp_moe_poly_v2_down,1,168,0,0,0,220224,384,1,0,$' "$tmp/pc.csv" ||
  fail "configs --plan --csv: $(cat "$tmp/pc.csv")"
[ "$(ls "$tmp/pc")" = poly.cubin ] || fail "--cubin-dir of a plan: $(ls "$tmp/pc")"
if "$check" --which >/dev/null 2>&1; then
  expect 0 "1 cubins, 0 breaking the rules" -- "$check" "$tmp/pc"
  # the two kernels' code, tens of KB at least (a measure, no rule), and
  # no IEEE division's check
  expect 0 "sass poly: .*code [0-9]{2,}\.[0-9] KB, FCHK 0$" -- "$check" "$tmp/pc"
  # the exact SiLU and FP8 scale (the A/B forms, kernels/common.cuh and
  # fp8.cuh) still compile, bring the IEEE divisions back, and the rule for
  # kernel v2 programs catches them
  expect 0 "can run as compiled" -- env RAMP_JIT_DEFINES="RAMP_FAST_SILU=0 RAMP_FAST_QSCALE=0" \
    "$ramp" configs --plan "$tmp/ds.json" --ptxas --cubin-dir "$tmp/pexact"
  mv "$tmp/pexact/poly.cubin" "$tmp/pexact/poly-v2-exact.cubin"
  expect 1 "sass poly-v2-exact: .*FCHK [1-9][0-9]*   BAD: .*no FCHK" -- "$check" "$tmp/pexact"
fi
expect 1 "moe_poly_v2.cuh not found" -- env RAMP_KERNEL_DIR="$tmp/nokernels" \
  "$ramp" configs --plan "$tmp/ds.json" --ptxas --cubin-dir "$tmp/pfail"
ls -d "$tmp"/pfail* >/dev/null 2>&1 && fail "a failed plan compile left $(ls -d "$tmp"/pfail*)"
finish cli_sass
