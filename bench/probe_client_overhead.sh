#!/bin/bash
# aimem probe's own cost (issue #5): the real CLI probes a trivial local
# OpenAI-compatible server (bench/probe_trivial_server, which generates
# nothing) with 10,000 short streamed requests (2 steps x 5,000), under
# /usr/bin/time. Prints aimem's CPU per request (user + system over the
# requests the JSON reports) and its peak RSS. Targets: under 100 us of CPU
# per request, RSS under 32 MiB. The figure includes everything the probe does
# besides the requests (start-up, sampling the server's memory, the report).
#   bench/probe_client_overhead.sh [BUILD_DIR] [REQUESTS_PER_STEP]
# PROBE_ARGS in the environment adds flags to the probe (e.g. "--pid N").
# Exit 2 when the build lacks `aimem probe` or the bench programs.
set -euo pipefail
BUILD=${1:-build}
PER_STEP=${2:-5000}
AIMEM=$BUILD/aimem
SERVER=$BUILD/bench/probe_trivial_server
TMP=$(mktemp -d)
cleanup() {
  [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -x "$SERVER" ]; then
  echo "probe_client_overhead: $SERVER not built (configure with -DAIMEM_BENCH=ON, build probe_trivial_server)" >&2
  exit 2
fi
if [ ! -x "$AIMEM" ] || ! "$AIMEM" probe --help >/dev/null 2>&1; then
  echo "probe_client_overhead: $AIMEM has no 'probe' command yet; nothing to measure (bench/probe_client_bench measures the client alone)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "probe_client_overhead: /usr/bin/time is missing (apt-get install time)" >&2
  exit 2
fi

"$SERVER" --port 0 --tokens 4 >"$TMP/server.out" 2>&1 &
SPID=$!
for _ in $(seq 100); do grep -q '^listening on' "$TMP/server.out" && break; sleep 0.05; done
PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/server.out")
if [ -z "$PORT" ]; then
  echo "probe_client_overhead: the trivial server did not start: $(cat "$TMP/server.out")" >&2
  exit 1
fi

set +e
/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$AIMEM" probe "http://127.0.0.1:$PORT" --contexts 16 \
  --concurrency 1,4 --requests "$PER_STEP" --max-new-tokens 4 --json ${PROBE_ARGS:-} >"$TMP/out.json" 2>"$TMP/err"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  echo "aimem probe exited $rc:" >&2
  tail -5 "$TMP/err" >&2
fi
# Requests as the probe reports them; none reported means nothing to measure
# (exit 2 from the probe: arguments refused, or the command not there yet).
requests=$(python3 -c 'import json,sys; print(sum(s.get("requests", 0) for s in json.load(open(sys.argv[1])).get("steps", [])))' \
  "$TMP/out.json" 2>/dev/null || echo 0)
if [ "${requests:-0}" -le 0 ]; then
  echo "probe_client_overhead: aimem probe reported no requests; no figures" >&2
  exit 2
fi
read -r user sys maxrss_kib <"$TMP/time"
awk -v u="$user" -v s="$sys" -v m="$maxrss_kib" -v n="$requests" 'BEGIN {
  us = (u + s) * 1e6 / n;
  printf "aimem probe, %d streamed requests (concurrency 1 and 4, 4 tokens each): CPU %.1f us/request (target < 100 us: %.2fx of it), user %.2f s, system %.2f s\n", n, us, us / 100, u, s;
  printf "peak RSS %.1f MiB (target < 32 MiB: %.2fx of it)\n", m / 1024, m / 1024 / 32 }'
exit "$rc"
