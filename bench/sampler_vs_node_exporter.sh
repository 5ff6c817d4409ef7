#!/bin/bash
# CPU time of one aimem sample of everything (host, every memory cgroup, every
# process, GPUs) against one scrape of node_exporter's /metrics (default
# collectors), in the same run, with 1,000 extra sleeping processes on the
# machine. aimem: bench/sample_once (CLOCK_PROCESS_CPUTIME_ID per sample).
# node_exporter: the sum of its threads' run time (/proc/PID/task/*/schedstat,
# nanoseconds) before and after each scrape, plus utime+stime from
# /proc/PID/stat over the whole run as a cross-check. Target: aimem <= 0.2x.
# Usage: bench/sampler_vs_node_exporter.sh [BUILD_DIR] [N] [EXTRA_PROCESSES]
set -euo pipefail
BUILD=${1:-build}
N=${2:-200}
EXTRA=${3:-1000}
PORT=${PORT:-19464}
SAMPLE_ONCE=$BUILD/bench/sample_once
[ -x "$SAMPLE_ONCE" ] || { echo "build $SAMPLE_ONCE first (cmake --build $BUILD --target sample_once)" >&2; exit 2; }
command -v prometheus-node-exporter >/dev/null || { echo "prometheus-node-exporter not installed" >&2; exit 2; }

SLEEPERS=()
NE=
cleanup() {
  set +e
  [ -n "$NE" ] && kill "$NE" 2>/dev/null
  [ ${#SLEEPERS[@]} -gt 0 ] && kill "${SLEEPERS[@]}" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT INT TERM

for _ in $(seq "$EXTRA"); do sleep 600 </dev/null >/dev/null 2>&1 & SLEEPERS+=($!); done
prometheus-node-exporter --web.listen-address=127.0.0.1:$PORT >/dev/null 2>&1 &
NE=$!
for _ in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:$PORT/metrics && break; sleep 0.1; done
curl -sf -o /dev/null http://127.0.0.1:$PORT/metrics  # warm
echo "processes on the machine: $(ls -d /proc/[0-9]* | wc -l) (with $EXTRA extra sleepers)"

ne_ns() { cat /proc/$NE/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d\n", s}'; }
ne_ticks() { awk '{print $14 + $15}' /proc/$NE/stat; }
t0=$(ne_ticks)
for _ in $(seq "$N"); do
  a=$(ne_ns); curl -sf -o /dev/null http://127.0.0.1:$PORT/metrics; b=$(ne_ns)
  echo $(( (b - a) / 1000 ))
done | sort -n > /tmp/aimem_ne_us.$$
t1=$(ne_ticks)
ne_median=$(awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}' /tmp/aimem_ne_us.$$)
rm -f /tmp/aimem_ne_us.$$
hz=$(getconf CLK_TCK)
ne_mean_stat=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.0f", d * 1e6 / hz / n}')
echo "node_exporter_scrapes $N"
echo "node_exporter_median_us $ne_median"
echo "node_exporter_mean_us_from_stat $ne_mean_stat"

out=$("$SAMPLE_ONCE" "$N")
echo "$out"
aimem_median=$(echo "$out" | awk '$1 == "aimem_median_us" {print $2}')
awk -v a="$aimem_median" -v b="$ne_median" 'BEGIN {r = a / b; printf "ratio_aimem_over_node_exporter %.3f (target <= 0.2: %s)\n", r, r <= 0.2 ? "met" : "NOT met"}'
