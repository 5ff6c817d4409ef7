#!/usr/bin/env bash
# Packs what tests/gpu/device_check.sh needs from a build into one folder to
# carry to a GPU machine that has no compiler and no package registry:
#
#   tests/gpu/bundle.sh BUILD_DIR OUT_DIR     (then: device_check.sh OUT_DIR)
#
# OUT_DIR gets `aimem` and `aimem_cuda_oom`, stripped (a Debug aimem is ~75 MB,
# stripped ~17 MB), and OUT_DIR/lib every shared library `ldd` lists for them
# except the C and C++ runtimes every Linux machine has (libc, libm, libstdc++,
# libgcc_s, the loader): libfmt, libcivetweb, libsystemd and theirs.
# device_check.sh puts OUT_DIR/lib on LD_LIBRARY_PATH. The GPU machine's glibc
# must be as new as this one's (`ldd --version` on both).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
BUILD=$1 OUT=$2
for b in aimem aimem_cuda_oom; do
  [ -x "$BUILD/$b" ] || { echo "bundle: $BUILD/$b: not an executable (build it first)" >&2; exit 2; }
done
mkdir -p "$OUT/lib"
for b in aimem aimem_cuda_oom; do
  if command -v strip >/dev/null 2>&1; then strip -o "$OUT/$b" "$BUILD/$b"; else cp "$BUILD/$b" "$OUT/$b"; fi
  ldd "$BUILD/$b" | awk '/=> \// { print $1, $3 }' | while read -r name path; do
    case $name in libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | ld-linux* | libdl.so.* | libpthread.so.* | librt.so.*) continue ;; esac
    cp -L "$path" "$OUT/lib/$name"
  done
done
echo "bundle: $OUT: $(du -sh "$OUT" | cut -f1) ($(ls "$OUT/lib" | tr '\n' ' '))"
