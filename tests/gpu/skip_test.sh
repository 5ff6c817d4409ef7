#!/usr/bin/env bash
# The paths of tests/gpu/device_check.sh and aimem_cuda_oom that run without a
# GPU (ctest gpu_device_check_skips):
#   - device_check.sh as it stands on this machine: one "SKIP:" line, exit 77
#     (no GPU here; on a GPU machine the suite never sets
#     AIMEM_GPU_DEVICE_CHECK=1, so it skips there too, without filling it);
#   - no nvidia-smi and no libcuda (forced): SKIP naming both, exit 77;
#   - a GPU that answers (a stand-in nvidia-smi and libcuda) but no
#     AIMEM_GPU_DEVICE_CHECK=1: SKIP naming the variable, exit 77, nothing filled;
#   - a build folder without the binaries: exit 2 naming the path;
#   - aimem_cuda_oom: no libcuda (77), no device (77), not asked (77), and with
#     the stand-in libcuda asked to fill its 64 MiB: the OOM line, the bytes
#     held, exit 2, and `aimem diagnose` on that output says gpu_vram;
#   - bundle.sh's folder to carry: both binaries, their libraries, a SKIP from it.
#
#   skip_test.sh DEVICE_CHECK_SH BUILD_DIR FAKE_LIBCUDA
set -u
CHECK=$1 BUILD=$2 FAKE=$3
OOM=$BUILD/aimem_cuda_oom
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aimem-gpu-skip.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# expect NAME WANT_STATUS WANT_REGEX OUTPUT_FILE STATUS
expect() {
  if [ "$5" -ne "$2" ]; then fail "$1: exit $5, want $2; output:"; sed 's/^/  | /' "$4"; return; fi
  if ! grep -Eq -e "$3" "$4"; then fail "$1: no line matching /$3/; output:"; sed 's/^/  | /' "$4"; return; fi
  echo "ok: $1: exit $5, $(grep -E -e "$3" "$4" | head -n 1)"
}

# 1. As it stands here (and on any machine where nobody asked for the check).
env -u AIMEM_GPU_DEVICE_CHECK bash "$CHECK" "$BUILD" >"$TMP/1" 2>&1
expect "device_check.sh here" 77 '^SKIP: ' "$TMP/1" $?
[ "$(grep -c '^SKIP:' "$TMP/1")" -eq 1 ] || fail "device_check.sh here: want exactly one SKIP line"
cat "$TMP/1"

# 2. Neither nvidia-smi nor libcuda, even when asked.
AIMEM_GPU_DEVICE_CHECK=1 NVIDIA_SMI=/nonexistent/nvidia-smi AIMEM_LIBCUDA=/nonexistent/libcuda.so.1 \
  bash "$CHECK" "$BUILD" >"$TMP/2" 2>&1
expect "no GPU" 77 '^SKIP: no NVIDIA GPU here \(nvidia-smi: /nonexistent/nvidia-smi not found; libcuda: cannot load /nonexistent/libcuda.so.1' "$TMP/2" $?

# 3. A GPU answers (stand-ins), but the check was not asked for: nothing filled.
cat >"$TMP/nvidia-smi" <<'EOF'
#!/bin/sh
[ "$1" = -L ] && { echo "GPU 0: Stand-in GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)"; exit 0; }
echo "stand-in nvidia-smi: not expected to be asked: $*" >&2
exit 9
EOF
chmod +x "$TMP/nvidia-smi"
env -u AIMEM_GPU_DEVICE_CHECK NVIDIA_SMI="$TMP/nvidia-smi" AIMEM_LIBCUDA="$FAKE" bash "$CHECK" "$BUILD" >"$TMP/3" 2>&1
expect "GPU, not asked" 77 '^SKIP: a GPU is here \(GPU 0: Stand-in GPU .*AIMEM_GPU_DEVICE_CHECK=1 is not set' "$TMP/3" $?
grep -q 'not expected to be asked' "$TMP/3" && fail "GPU, not asked: device_check.sh queried nvidia-smi past -L"

# 4. A build folder without the binaries.
mkdir "$TMP/empty"
bash "$CHECK" "$TMP/empty" >"$TMP/4" 2>&1
expect "no build" 2 "$TMP/empty/aimem: not an executable" "$TMP/4" $?
bash "$CHECK" >"$TMP/4b" 2>&1
expect "no argument" 2 'usage: .*BUILD_DIR' "$TMP/4b" $?

# 5. aimem_cuda_oom by itself.
"$OOM" --libcuda /nonexistent/libcuda.so.1 >"$TMP/5a" 2>&1
expect "cuda_oom without libcuda" 77 '^aimem_cuda_oom\[[0-9]+\]: SKIP: cannot load /nonexistent/libcuda.so.1' "$TMP/5a" $?
FAKE_CUDA_DEVICES=0 AIMEM_GPU_DEVICE_CHECK=1 "$OOM" --libcuda "$FAKE" >"$TMP/5b" 2>&1
expect "cuda_oom, no device" 77 'SKIP: cuInit: CUDA_ERROR_NO_DEVICE \(no CUDA-capable device is detected\)' "$TMP/5b" $?
env -u AIMEM_GPU_DEVICE_CHECK "$OOM" --libcuda "$FAKE" >"$TMP/5c" 2>&1
expect "cuda_oom, not asked" 77 'SKIP: not filling GPU 0: set AIMEM_GPU_DEVICE_CHECK=1' "$TMP/5c" $?
grep -q 'CUDA error' "$TMP/5c" && fail "cuda_oom, not asked: it allocated"
env -u AIMEM_GPU_DEVICE_CHECK "$OOM" >"$TMP/5d" 2>&1
st=$?
# This machine's own libcuda: none here (77); on a GPU machine, not asked (77).
expect "cuda_oom as it stands" 77 'SKIP: ' "$TMP/5d" $st
"$OOM" --hold x >"$TMP/5e" 2>&1
expect "cuda_oom, bad argument" 1 '--hold: not 0..3600 seconds' "$TMP/5e" $?

# 6. The stand-in's 64 MiB filled in 16 MiB chunks: 4 allocations, the 5th refused.
FAKE_CUDA_MIB=64 AIMEM_GPU_DEVICE_CHECK=1 "$OOM" --libcuda "$FAKE" --chunk-mib 16 --hold 0 >"$TMP/6" 2>&1
st=$?
expect "cuda_oom fills the stand-in" 2 '^aimem_cuda_oom\[[0-9]+\]: CUDA error at cuda_oom.cc:[0-9]+ code=2\(CUDA_ERROR_OUT_OF_MEMORY\) "cuMemAlloc_v2\(&ptr, 16777216\)": out of memory$' "$TMP/6" $st
grep -q 'out of memory after 4 allocations of 16 MiB: holding 67108864 bytes' "$TMP/6" ||
  fail "cuda_oom fills the stand-in: want 4 allocations holding 67108864 bytes"
cat "$TMP/6"
pid=$(sed -n 's/^aimem_cuda_oom\[\([0-9]*\)\]:.*/\1/p' "$TMP/6" | head -n 1)
"$BUILD/aimem" diagnose --json "$TMP/6" >"$TMP/6.json" 2>&1
grep -q '"layer": *"gpu_vram"' "$TMP/6.json" || { fail "diagnose of cuda_oom's output: not gpu_vram"; cat "$TMP/6.json"; }
"$BUILD/aimem" diagnose "$TMP/6" >"$TMP/6.txt" 2>&1
if [ -n "$pid" ] && grep -q "aimem_cuda_oom\[$pid\]: CUDA error at" "$TMP/6.txt"; then
  echo "ok: diagnose names aimem_cuda_oom and pid $pid"
else
  fail "diagnose of cuda_oom's output does not name aimem_cuda_oom and pid $pid:"
  sed 's/^/  | /' "$TMP/6.txt"
fi

# 7. The bundle to carry (bundle.sh): both binaries stripped, aimem's own
# libraries in lib/, and device_check.sh runs from it (here: to its SKIP).
bash "$(dirname "$CHECK")/bundle.sh" "$BUILD" "$TMP/bundle" >"$TMP/7" 2>&1 || { fail "bundle.sh:"; cat "$TMP/7"; }
for b in aimem aimem_cuda_oom; do [ -x "$TMP/bundle/$b" ] || fail "bundle: no $b"; done
[ -e "$TMP/bundle/lib/libc.so.6" ] && fail "bundle: carries libc"
env -u AIMEM_GPU_DEVICE_CHECK bash "$CHECK" "$TMP/bundle" >"$TMP/7b" 2>&1
expect "device_check.sh on the bundle" 77 '^SKIP: ' "$TMP/7b" $?
LD_LIBRARY_PATH="$TMP/bundle/lib" "$TMP/bundle/aimem" --version >"$TMP/7c" 2>&1
expect "bundled aimem runs" 0 '[0-9]+\.[0-9]+' "$TMP/7c" $?

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all skip paths hold"
