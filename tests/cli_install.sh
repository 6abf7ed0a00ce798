#!/usr/bin/env bash
# `cmake --install` of this build into a scratch prefix: the header, the
# library, the CLI, every kernel source the library compiles at run time and
# the routing data, and the Python binding finding the installed library by
# itself. Args: path of the ramp binary (its folder is the build), source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"
src=$2
build=$(dirname "$ramp")
p=$tmp/prefix
cmake --install "$build" --prefix "$p" > "$tmp/install.log" 2>&1 || fail "cmake --install: $(tail -5 "$tmp/install.log")"
[ -f "$p/include/ramp.h" ] || fail "no include/ramp.h"
cmp -s "$src/include/ramp.h" "$p/include/ramp.h" || fail "installed ramp.h differs"
lib=$(ls "$p"/lib*/libramp.a "$p"/lib/*/libramp.a 2>/dev/null | head -n 1)
[ -n "$lib" ] || fail "no libramp.a under $p/lib*"
for f in "$src"/kernels/*.cuh "$src"/kernels/*.h; do
  cmp -s "$f" "$p/share/ramp/kernels/$(basename "$f")" || fail "kernel source $(basename "$f") not installed"
done
[ -f "$p/share/ramp/data/routing/README.md" ] || fail "no routing data"
want=$(sed -n 's/#define RAMP_VERSION_STRING "\(.*\)"/\1/p' "$src/include/ramp.h")
expect 0 "^ramp $want\$" -- "$p/bin/ramp" version
if [ -f "$build/libramp.so" ]; then # unsanitized builds: the binding, as installed
  so=$(ls "$p"/lib*/libramp.so "$p"/lib/*/libramp.so 2>/dev/null | head -n 1)
  [ -n "$so" ] || fail "no libramp.so under $p/lib*"
  expect 0 "^$p/.*libramp.so $want\$" -- env -u RAMP_LIBRARY python3 -c \
    "import sys; sys.path.insert(0, '$p/share/ramp/python'); import ramp; print(ramp.library_path(), ramp.version())"
fi
finish cli_install
