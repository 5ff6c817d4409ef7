#!/bin/bash
# CPU time of one aimem sample of everything (host, every memory cgroup, every
# process, GPUs) against one scrape of node_exporter's /metrics (default
# collectors), in the same run, with 1,000 extra sleeping processes on the
# machine. aimem: bench/sample_once --serve (CLOCK_PROCESS_CPUTIME_ID per
# sample). node_exporter: the sum of its threads' run time
# (/proc/PID/task/*/schedstat, nanoseconds) before and after each scrape, plus
# utime+stime from /proc/PID/stat over the whole run as a cross-check. Samples
# and scrapes alternate, one of each per round, so that both meet the same load
# on a shared machine (run one after the other, a build starting in between
# moved the ratio by half), and both run with the caches another process left
# (back to back, aimem's samples found the kernel's task and dentry lines
# still hot and cost half as much as spaced out). ORDER=sequential runs the
# first version's method: every scrape, then every sample back to back.
# Target: aimem <= 0.2x.
# Usage: [SAMPLE_ONCE=PATH] bench/sampler_vs_node_exporter.sh [BUILD_DIR] [N] [EXTRA_PROCESSES]
set -euo pipefail
BUILD=${1:-build}
N=${2:-200}
EXTRA=${3:-1000}
PORT=${PORT:-19464}
SAMPLE_ONCE=${SAMPLE_ONCE:-$BUILD/bench/sample_once}  # override to compare two builds
[ -x "$SAMPLE_ONCE" ] || { echo "build $SAMPLE_ONCE first (cmake --build $BUILD --target sample_once)" >&2; exit 2; }
command -v prometheus-node-exporter >/dev/null || { echo "prometheus-node-exporter not installed" >&2; exit 2; }

SLEEPERS=()
NE=
cleanup() {
  set +e
  [ -n "$NE" ] && kill "$NE" 2>/dev/null
  [ -n "${SO_PID:-}" ] && kill "$SO_PID" 2>/dev/null
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
coproc SO { "$SAMPLE_ONCE" --serve; }
read -r _ first_us procs <&"${SO[0]}"
t0=$(ne_ticks)
for _ in $(seq "$N"); do
  a=$(ne_ns); curl -sf -o /dev/null http://127.0.0.1:$PORT/metrics; b=$(ne_ns)
  if [ "${ORDER:-interleaved}" = interleaved ]; then
    echo >&"${SO[1]}"; read -r us procs <&"${SO[0]}"
  fi
  echo $(( (b - a) / 1000 )) "${us:-0}"
done > /tmp/aimem_pairs.$$
if [ "${ORDER:-interleaved}" = sequential ]; then  # the first version's method: all scrapes, then all samples back to back
  for _ in $(seq "$N"); do echo; done >&"${SO[1]}"
  for i in $(seq "$N"); do read -r us procs <&"${SO[0]}"; echo "$us"; done > /tmp/aimem_us.$$
  paste -d' ' <(cut -d' ' -f1 /tmp/aimem_pairs.$$) /tmp/aimem_us.$$ > /tmp/aimem_pairs2.$$
  mv /tmp/aimem_pairs2.$$ /tmp/aimem_pairs.$$
  rm -f /tmp/aimem_us.$$
fi
t1=$(ne_ticks)
eval "exec ${SO[1]}>&-"  # sample_once ends at end of input
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ne_median=$(cut -d' ' -f1 /tmp/aimem_pairs.$$ | median)
aimem_median=$(cut -d' ' -f2 /tmp/aimem_pairs.$$ | median)
aimem_p90=$(cut -d' ' -f2 /tmp/aimem_pairs.$$ | sort -n | awk '{v[NR] = $1} END {print v[int(NR * 0.9)]}')
rm -f /tmp/aimem_pairs.$$
hz=$(getconf CLK_TCK)
ne_mean_stat=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.0f", d * 1e6 / hz / n}')
echo "rounds $N (one scrape and one sample each; order ${ORDER:-interleaved})"
echo "node_exporter_median_us $ne_median"
echo "node_exporter_mean_us_from_stat $ne_mean_stat"
echo "aimem_processes $procs"
echo "aimem_first_sample_us $first_us"
echo "aimem_median_us $aimem_median"
echo "aimem_p90_us $aimem_p90"
awk -v a="$aimem_median" -v b="$ne_median" 'BEGIN {r = a / b; printf "ratio_aimem_over_node_exporter %.3f (target <= 0.2: %s)\n", r, r <= 0.2 ? "met" : "NOT met"}'
