#!/bin/sh
# Benchmark: `aimem diagnose FILE` against `grep -E -i 'out of memory|killed
# process' FILE` on the same 1 GiB mixed log, in one run. Prints both medians,
# the ratio and aimem's peak RSS. Usage: bench/diagnose_vs_grep.sh [BUILD_DIR] [SIZE_MIB] [RUNS]
set -eu
BUILD=${1:-build}
SIZE=${2:-1024}
RUNS=${3:-3}
OUT=bench/out
mkdir -p "$OUT"
LOG="$OUT/mixed-${SIZE}MiB.log"
if [ ! -s "$LOG" ]; then
  echo "writing $LOG (${SIZE} MiB)..."
  "$BUILD/bench/gen_mixed_log" "$LOG" "$SIZE"
fi
# Warm the page cache once so both read from memory.
cat "$LOG" > /dev/null
"$BUILD/aimem" diagnose "$LOG" | head -3
"$BUILD/bench/run_compare" "$RUNS" -- "$BUILD/aimem" diagnose "$LOG" -- grep -E -i 'out of memory|killed process' "$LOG"
