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
# The log as it is when read from disk: this file's pages dropped from the
# page cache (only this file's: sync, then dd's nocache), then read once, so
# both programs read from memory and the cache holds what readahead builds
# (large folios). Without this the state depends on the cache's history: a
# log still cached as the generator wrote it reads 0.98x, the same log read
# back 0.75x (2026-12-05), and the old gate's extra pages showed only in the
# second state.
sync "$LOG"
dd if="$LOG" iflag=nocache count=0 status=none
cat "$LOG" > /dev/null
"$BUILD/aimem" diagnose "$LOG" | head -3
"$BUILD/bench/run_compare" "$RUNS" -- "$BUILD/aimem" diagnose "$LOG" -- grep -E -i 'out of memory|killed process' "$LOG"
