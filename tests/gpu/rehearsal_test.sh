#!/usr/bin/env bash
# A rehearsal of tests/gpu/device_check.sh's GPU path with stand-ins for all
# three NVIDIA parts (ctest gpu_device_check_rehearsal): nvidia-smi (a script
# written here), NVML (tests/fakes/fake_nvml.c, read by the real `aimem watch`)
# and libcuda (tests/gpu/fake_cuda.c, driven by the real aimem_cuda_oom). It
# proves the script's own plumbing (watch start, /metrics read through bash's
# /dev/tcp as on a machine without curl, its parsing, the
# comparisons, the alert log, the store, diagnose, the table, the clean-up)
# before a GPU is ever lent; it proves nothing about a real GPU. It touches no
# real GPU even where one exists: every NVIDIA part is a stand-in.
#
# The stand-ins agree: GPU 0 has 1024 MiB, 1000 MiB used (97.7%: past watch's
# 95% GPU alert) and one process, pid 1000, with 500 MiB. That process is not
# the OOM program (the stand-in NVML cannot know its pid), so the one check
# expected to fail is "nvidia-smi lists aimem_cuda_oom", which also exercises
# the failure path: exit 1, every other row PASS.
#
#   rehearsal_test.sh DEVICE_CHECK_SH BUILD_DIR FAKE_LIBCUDA FAKE_NVML
set -u
CHECK=$1 BUILD=$2 FAKE_CUDA=$3 FAKE_NVML=$4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aimem-gpu-rehearsal.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$TMP/nvidia-smi" <<'EOF'
#!/bin/sh
# Stand-in nvidia-smi: the answers of one 1024 MiB GPU with one process.
case "$*" in
  -L) echo "GPU 0: Rehearsal GPU (UUID: GPU-00000000-0000-0000-0000-000000000001)" ;;
  "-i 0 --query-compute-apps=pid,used_memory --format=csv,noheader,nounits") ;;  # nothing before the check starts
  *--query-gpu=index,name,driver_version,memory.total,memory.reserved,memory.used*)
    echo "index, name, driver_version, memory.total [MiB], memory.reserved [MiB], memory.used [MiB]"
    echo "0, Rehearsal GPU, 0.0, 1024 MiB, 0 MiB, 1000 MiB" ;;
  "--query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits") echo "0, 1000, 1024" ;;
  "--query-compute-apps=pid,used_memory --format=csv,noheader,nounits") echo "1000, 500" ;;
  *) echo "stand-in nvidia-smi: unexpected arguments: $*" >&2; exit 9 ;;
esac
EOF
chmod +x "$TMP/nvidia-smi"

mkdir "$TMP/out"
start=$(date +%s)
env AIMEM_GPU_DEVICE_CHECK=1 NVIDIA_SMI="$TMP/nvidia-smi" AIMEM_LIBCUDA="$FAKE_CUDA" FAKE_CUDA_MIB=1024 \
  AIMEM_NVML_LIBRARY="$FAKE_NVML" AIMEM_FAKE_NVML_DEVICES="Rehearsal GPU:1024:1000:0" AIMEM_FAKE_NVML_PROCS="0:1000:500" \
  AIMEM_CUDA_OOM_HOLD=2 AIMEM_DEVICE_CHECK_OUT="$TMP/out" AIMEM_DEVICE_CHECK_NO_CURL=1 \
  bash "$CHECK" "$BUILD" >"$TMP/log" 2>&1
st=$?
took=$(($(date +%s) - start))
cat "$TMP/log"
echo "--- rehearsal: exit $st after $took s"

[ "$st" -eq 1 ] || fail "exit $st, want 1 (one expected FAIL row)"
grep -q 'unexpected arguments' "$TMP/log" && fail "device_check.sh asked nvidia-smi something the stand-in does not answer"
row() { # CHECK-REGEX RESULT DETAIL-REGEX
  grep -Eq -e "^$1 +$2 +$3" "$TMP/log" || fail "no summary row /$1 $2 $3/"
}
row 'idle: GPU 0 memory.total' PASS 'aimem 1024.0 MiB, nvidia-smi 1024.0 MiB, off by 0.000% of total'
row 'idle: GPU 0 memory.used' PASS 'aimem 1000.0 MiB, nvidia-smi 1000.0 MiB'
row 'idle: process 1000 GPU memory' PASS 'aimem 500.0 MiB, nvidia-smi 500.0 MiB, off by 0.0 MiB'
row 'oom: GPU 0 memory.used' PASS 'aimem 1000.0 MiB'
row 'oom: process 1000 GPU memory' PASS 'aimem 500.0 MiB'
row 'oom: nvidia-smi lists aimem_cuda_oom' FAIL 'pid [0-9]+ not among nvidia-smi'
row 'oom: driver answered CUDA_ERROR_OUT_OF_MEMORY' PASS 'holding 1073741824 bytes \(1.00 GiB\)'
row 'alert log: GPU headroom alert' PASS '"message":"GPU 0 uses'
row 'store: alert event \(aimem report --json\)' PASS 'kind alert, key gpu:0'
if command -v sqlite3 >/dev/null 2>&1; then row 'store: events table \(sqlite3\)' PASS '1 alert row\(s\) with key gpu:0'; fi
row 'diagnose: layer' PASS gpu_vram
row 'diagnose: names the process' PASS 'aimem_cuda_oom\[[0-9]+\] in its evidence'
[ "$(grep -cE '^[a-z].{45} FAIL ' "$TMP/log")" -eq 1 ] || fail "want exactly one FAIL row"
grep -q '^device_check: FAILED$' "$TMP/log" || fail "no FAILED line"
# The logs kept, the temporary folder gone, nothing left running.
for f in watch.db alerts.jsonl cuda_oom.out diagnose.json metrics-idle.txt metrics-oom.txt report.json; do
  [ -s "$TMP/out/device_check/$f" ] || fail "logs: no $f in AIMEM_DEVICE_CHECK_OUT"
done
ls -d "${TMPDIR:-/tmp}"/aimem-device-check.* 2>/dev/null | while read -r d; do
  [ "$(stat -c %Y "$d")" -ge "$start" ] && echo "FAIL: temporary folder $d left behind" && exit 1
done || fails=$((fails + 1))
pids=$(grep -oE 'aimem watch \(pid [0-9]+\)|aimem_cuda_oom\[[0-9]+\]' "$TMP/log" | grep -oE '[0-9]+' | sort -u)
for p in $pids; do
  case $(cat "/proc/$p/comm" 2>/dev/null) in aimem | aimem_cuda_oom) fail "pid $p still running" ;; esac
done
[ "$took" -le 60 ] || fail "took $took s"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "rehearsal: every row as expected"
