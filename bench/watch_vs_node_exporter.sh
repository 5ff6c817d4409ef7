#!/bin/bash
# The running `aimem watch` against the running node_exporter, in one run:
# aimem watches the whole host (every cgroup and process, store and /metrics
# on) at a 1 s interval, node_exporter runs its default collectors, both are
# scraped once a second over the same window, with EXTRA sleeping processes
# on the machine. CPU is each process's run time in nanoseconds over the
# window: the first field of /proc/PID/task/TID/schedstat (the scheduler's
# sum_exec_runtime), summed over its threads, read at both ends of the window
# (the utime+stime ticks of /proc/PID/stat, 10 ms each, are printed beside
# it: aimem's 40 s come to 5-15 of them, too few for one run to tell). A
# thread that exits within the window takes its run time with it, so the
# threads at both ends are compared and any that went are said. aimem's peak
# RSS is its VmHWM; its voluntary context switches are summed over its threads
# (/proc/PID/task/*/status): each is a sleep ended by a wake-up. Start-up (the first WARMUP s) is left out.
# Targets (issue 18): CPU <= 0.2x node_exporter's, peak RSS <= 10 MiB,
# <= 2 wake-ups a second when idle (IDLE_SECONDS without scrapes, measured
# first).
#   bench/watch_vs_node_exporter.sh BUILD_DIR [SECONDS] [EXTRA_PROCESSES]
# AIMEM=PATH compares another binary; WATCH_ARGS adds options (e.g. --no-processes).
# SLEEPER_CGROUP=1 starts the extra processes in a memory cgroup of their own
# (cgroup v1: made below this shell's, removed at the end), as a host's idle
# services are, rather than in this script's, where curl charges and frees
# pages every second. RECLAIM=1 makes the host reclaim twice a second, as a
# busy host whose cgroups hit their limits does (proc/vmstat pgsteal moves at
# every sample): a v1 cgroup of its own, empty but for the page cache of a
# 4 MiB file on disk read from inside it, is emptied with memory.force_empty,
# and removed at the end.
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-40}
EXTRA=${3:-1000}
IDLE_SECONDS=${IDLE_SECONDS:-10}
WARMUP=${WARMUP:-5}
AIMEM=${AIMEM:-$BUILD/aimem}
NE_PORT=${NE_PORT:-19464}
AIMEM_PORT=${AIMEM_PORT:-19465}
[ -x "$AIMEM" ] || { echo "build $AIMEM first (cmake --build $BUILD --target aimem)" >&2; exit 2; }
command -v prometheus-node-exporter >/dev/null || { echo "prometheus-node-exporter not installed (apt-get install prometheus-node-exporter)" >&2; exit 2; }

TMP=$(mktemp -d)
SLEEPERS=()
NE= AW= SLEEPER_CG= RECLAIM_CG= RECLAIMER=
cleanup() {
  set +e
  [ -n "$RECLAIMER" ] && kill "$RECLAIMER" 2>/dev/null
  [ -n "$AW" ] && kill "$AW" 2>/dev/null
  [ -n "$NE" ] && kill "$NE" 2>/dev/null
  [ ${#SLEEPERS[@]} -gt 0 ] && kill "${SLEEPERS[@]}" 2>/dev/null
  wait 2>/dev/null
  for cg in "$SLEEPER_CG" "$RECLAIM_CG"; do
    [ -n "$cg" ] || continue
    for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
  done
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
if [ -n "${SLEEPER_CGROUP:-}${RECLAIM:-}" ] && ! { [ -n "$own" ] && [ -d /sys/fs/cgroup/memory ]; }; then
  echo "SLEEPER_CGROUP and RECLAIM need a cgroup v1 memory hierarchy" >&2
  exit 2
fi
if [ -n "${RECLAIM:-}" ]; then
  RECLAIM_CG=/sys/fs/cgroup/memory${own%/}/aimem-bench-reclaim-$$
  mkdir "$RECLAIM_CG"
  # Written from inside, so its page cache is charged there; synced, so clean.
  (echo "$BASHPID" >"$RECLAIM_CG/cgroup.procs" && head -c 4M /dev/urandom >"$TMP/pages" && sync "$TMP/pages")
  (while :; do
     (echo "$BASHPID" >"$RECLAIM_CG/cgroup.procs" && cat "$TMP/pages" >/dev/null)
     echo 0 >"$RECLAIM_CG/memory.force_empty" 2>/dev/null
     sleep 0.5
   done) &
  RECLAIMER=$!
fi
if [ -n "${SLEEPER_CGROUP:-}" ]; then
  SLEEPER_CG=/sys/fs/cgroup/memory${own%/}/aimem-bench-sleepers-$$
  mkdir "$SLEEPER_CG"
  # Started from inside it, so their pages are charged there.
  (echo "$BASHPID" >"$SLEEPER_CG/cgroup.procs"
   for _ in $(seq "$EXTRA"); do sleep 900 </dev/null >/dev/null 2>&1 & echo $!; done) >"$TMP/sleepers"
  mapfile -t SLEEPERS <"$TMP/sleepers"
else
  for _ in $(seq "$EXTRA"); do sleep 900 </dev/null >/dev/null 2>&1 & SLEEPERS+=($!); done
fi
prometheus-node-exporter --web.listen-address=127.0.0.1:$NE_PORT >/dev/null 2>&1 &
NE=$!
# shellcheck disable=SC2086
AIMEM_NVML_LIBRARY=${AIMEM_NVML_LIBRARY:-/nonexistent} "$AIMEM" watch --interval 1s --db "$TMP/w.db" \
  --listen 127.0.0.1:$AIMEM_PORT ${WATCH_ARGS:-} 2>"$TMP/watch.log" &
AW=$!
for _ in $(seq 100); do
  curl -sf -o /dev/null http://127.0.0.1:$NE_PORT/metrics && curl -sf -o /dev/null http://127.0.0.1:$AIMEM_PORT/metrics && break
  sleep 0.1
done
sleep "$WARMUP"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Nanoseconds run by every thread of the process (schedstat's first field).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
tids() { ls /proc/"$1"/task | sort -n | tr '\n' ' '; }
# Voluntary switches are the process's sleeps, each ended by a wake-up;
# involuntary ones are preemptions, which the rest of the machine's load decides.
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk -v k="^$2_ctxt_switches" '$0 ~ k {s += $2} END {print s}'; }

# Idle: no scrape, only the watch's own samples.
c0=$(switches "$AW" voluntary); p0=$(switches "$AW" nonvoluntary); i0=$(date +%s.%N)
sleep "$IDLE_SECONDS"
c1=$(switches "$AW" voluntary); p1=$(switches "$AW" nonvoluntary); i1=$(date +%s.%N)

# Both scraped once a second over the same window.
at0=$(tids "$AW"); nt0=$(tids "$NE")
a0=$(cpu_ns "$AW"); n0=$(cpu_ns "$NE"); s0=$(date +%s.%N); w0=$(switches "$AW" voluntary)
ta0=$(ticks "$AW"); tn0=$(ticks "$NE")
for _ in $(seq "$SECS"); do
  curl -sf -o /dev/null http://127.0.0.1:$NE_PORT/metrics || echo "node_exporter scrape failed" >&2
  curl -sf -o /dev/null http://127.0.0.1:$AIMEM_PORT/metrics || echo "aimem scrape failed" >&2
  sleep 1
done
a1=$(cpu_ns "$AW"); n1=$(cpu_ns "$NE"); s1=$(date +%s.%N); w1=$(switches "$AW" voluntary)
ta1=$(ticks "$AW"); tn1=$(ticks "$NE")
at1=$(tids "$AW"); nt1=$(tids "$NE")
# A thread gone by the end took its run time with it: the figure is then low.
gone() { for t in $1; do case " $2 " in *" $t "*) ;; *) printf '%s ' "$t" ;; esac; done; }
ag=$(gone "$at0" "$at1"); ng=$(gone "$nt0" "$nt1")
[ -z "$ag" ] || echo "aimem threads exited within the window (their run time is not counted): $ag" >&2
[ -z "$ng" ] || echo "node_exporter threads exited within the window (their run time is not counted): $ng" >&2
hwm=$(awk '/VmHWM/ {print $2}' /proc/$AW/status)
threads=$(ls /proc/$AW/task | wc -l)
procs=$( (ls -d /proc/[0-9]* 2>/dev/null || true) | wc -l)  # ls fails on a process that exits while it lists
# A kill anywhere on the host is diagnosed as it happens (the recognizers and
# their pattern database are loaded for it): said, as it moves CPU and peak RSS.
kills=$(grep -c "OOM kill:" "$TMP/watch.log" || true)
samples=$(sqlite3 "$TMP/w.db" 'select count(*) from samples' 2>/dev/null || echo "?")
hz=$(getconf CLK_TCK)
awk -v a0="$a0" -v a1="$a1" -v n0="$n0" -v n1="$n1" -v s0="$s0" -v s1="$s1" -v hz="$hz" -v hwm="$hwm" \
    -v ta0="$ta0" -v ta1="$ta1" -v tn0="$tn0" -v tn1="$tn1" \
    -v c0="$c0" -v c1="$c1" -v p0="$p0" -v p1="$p1" -v i0="$i0" -v i1="$i1" -v w0="$w0" -v w1="$w1" -v procs="$procs" -v n="$samples" \
    -v threads="$threads" -v args="${WATCH_ARGS:-}" -v kills="$kills" 'BEGIN {
  wall = s1 - s0; a = (a1 - a0) / 1e9; b = (n1 - n0) / 1e9;
  printf "processes on the machine: %d; aimem watch --interval 1s %s (%d threads), %s samples stored, %d OOM kills on the host diagnosed\n", procs, args, threads, n, kills;
  printf "idle_wakeups_per_s %.1f (voluntary context switches of every aimem thread over %.0f s without scrapes; target <= 2); preempted %.1f/s\n", (c1 - c0) / (i1 - i0), i1 - i0, (p1 - p0) / (i1 - i0);
  printf "scraped_wakeups_per_s %.1f (scraped once a second)\n", (w1 - w0) / wall;
  printf "window_s %.1f\n", wall;
  printf "aimem_cpu_s %.4f (%.3f%% of one core; schedstat, every thread)\n", a, 100 * a / wall;
  printf "node_exporter_cpu_s %.4f (%.3f%% of one core; schedstat, every thread)\n", b, 100 * b / wall;
  printf "ticks (utime+stime, 1/%d s): aimem %d, node_exporter %d\n", hz, ta1 - ta0, tn1 - tn0;
  if (b > 0) printf "ratio_aimem_over_node_exporter %.3f (target <= 0.2: %s)\n", a / b, a / b <= 0.2 ? "met" : "NOT met";
  printf "aimem_peak_rss_mib %.1f (VmHWM; target <= 10: %s)\n", hwm / 1024, hwm / 1024 <= 10 ? "met" : "NOT met" }'
