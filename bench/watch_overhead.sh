#!/bin/bash
# aimem watch's own cost while it samples one process tree and its cgroup at
# 10 Hz (store and /metrics on), for SECONDS: CPU as a share of one core, and
# peak RSS (VmHWM). Targets (issue #4): under 1% of one core, under 10 MiB.
#   bench/watch_overhead.sh BUILD_DIR [SECONDS]
# SCOPE=pid or SCOPE=cgroup in the environment passes only that scope (default: both).
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-30}
AIMEM=$BUILD/aimem
TMP=$(mktemp -d)
own=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3)
CG=/sys/fs/cgroup/memory${own%/}/aimem-bench-$$
cleanup() {
  [ -n "${WPID:-}" ] && kill "$WPID" 2>/dev/null || true
  # Every member of the workload's cgroup, not only the shell: its sleep would
  # outlive it for an hour and keep the cgroup from being removed.
  [ -f "$CG/cgroup.procs" ] && xargs -r kill <"$CG/cgroup.procs" 2>/dev/null || true
  wait 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir "$CG"
# The watched workload: a shell with a sleeping child, in its own cgroup.
sh -c 'echo $$ > '"$CG"'/cgroup.procs; sleep 3600 & wait' &
SPID=$!
sleep 0.3
scope=()
[ "${SCOPE:-both}" != cgroup ] && scope+=(--pid "$SPID")
[ "${SCOPE:-both}" != pid ] && scope+=(--cgroup "${CG#/sys/fs/cgroup/memory}")
"$AIMEM" watch --interval 100ms "${scope[@]}" --db "$TMP/w.db" \
  --listen 127.0.0.1:0 --no-gpus 2>"$TMP/log" &
WPID=$!
sleep 2  # start-up excluded
ticks() { awk '{print $14 + $15}' /proc/$WPID/stat; }
t0=$(ticks); s0=$(date +%s.%N)
sleep "$SECS"
t1=$(ticks); s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$WPID/status)
# RSS counts every touched page of the shared libraries (libcrypto through
# Debian's libcpp-httplib alone is ~3 MiB); the private and anonymous parts are
# what aimem itself adds to the host.
uss=$(awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s}' /proc/$WPID/smaps_rollup)
anon=$(awk '/^Anonymous:/ {print $2}' /proc/$WPID/smaps_rollup)
pss=$(awk '/^Pss:/ {print $2}' /proc/$WPID/smaps_rollup)
rss=$(awk '/VmRSS/ {print $2}' /proc/$WPID/status)
samples=$(sqlite3 "$TMP/w.db" 'select count(*) from samples' 2>/dev/null || echo "?")
awk -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" -v hz="$hz" -v hwm="$hwm"  -v rss="$rss" -v uss="$uss" -v anon="$anon" -v pss="$pss" -v n="$samples" -v scope="${SCOPE:-both}" 'BEGIN {
  cpu = (t1 - t0) / hz; wall = s1 - s0;
  printf "aimem watch, 10 Hz, scope %s, %.0f s: CPU %.2f%% of one core (target < 1%%), %s samples stored\n", scope, wall, 100 * cpu / wall, n;
  printf "RSS now %.1f MiB, peak (VmHWM) %.1f MiB (target < 10 MiB); private (USS) %.1f MiB, anonymous %.1f MiB, PSS %.1f MiB\n", rss / 1024, hwm / 1024, uss / 1024, anon / 1024, pss / 1024 }'
