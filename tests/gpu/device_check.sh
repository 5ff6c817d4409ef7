#!/usr/bin/env bash
# GPU truth: aimem against a real NVIDIA GPU and its driver, in under 5 minutes.
#
#   tests/gpu/device_check.sh BUILD_DIR
#
# BUILD_DIR holds the built `aimem` and `aimem_cuda_oom` (carry it over: the
# GPU machine may have no compiler and no package registry), and in lib/ any
# shared library of aimem's that machine lacks. Needs only bash,
# coreutils and the NVIDIA driver (nvidia-smi, libcuda.so.1); curl and sqlite3
# are used where present, otherwise bash's /dev/tcp and `aimem report --json`.
#
# With a GPU and AIMEM_GPU_DEVICE_CHECK=1 it
#   1. starts `aimem watch` (500ms interval, --alert-log, --db in a temporary
#      folder, /metrics on a loopback port);
#   2. compares /metrics with nvidia-smi on an idle GPU: per-GPU used and total
#      (within 1% of the GPU's total) and each process nvidia-smi lists
#      (within 1% of its use, or 1 MiB: nvidia-smi rounds to MiB);
#   3. runs aimem_cuda_oom, which fills GPU $AIMEM_GPU_INDEX (default 0) through
#      the driver API until CUDA_ERROR_OUT_OF_MEMORY and holds it, and compares
#      again, the OOM program's own use included;
#   4. checks that the alert log has the GPU's headroom alert, that the store
#      has it as an event (`aimem report --json`), and that `aimem diagnose` on
#      the OOM program's output says layer gpu_vram and names the process.
# It prints a summary table, copies its logs to $OUT (or
# $AIMEM_DEVICE_CHECK_OUT) when set, removes its temporary folder and ends only
# the processes it started, by PID.
#
# Exit status: 0 every check passed; 1 a check failed; 2 bad usage or a missing
# build; 77 skipped: no GPU here, or a GPU but AIMEM_GPU_DEVICE_CHECK=1 not set
# (it fills the GPU, which disturbs anyone else using it). The skip always
# prints one line starting "SKIP:".
#
# NVIDIA_SMI and AIMEM_LIBCUDA override the nvidia-smi command and the libcuda
# path (the tests' stand-ins: tests/gpu/skip_test.sh, rehearsal_test.sh);
# AIMEM_GPU_INDEX picks the GPU (default 0); AIMEM_CUDA_OOM_HOLD how long the
# full GPU is held (default 15 s).
set -u

die() { echo "device_check: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR (the folder with aimem and aimem_cuda_oom)"
BUILD=$1
AIMEM=$BUILD/aimem
OOM=$BUILD/aimem_cuda_oom
[ -x "$AIMEM" ] || die "$AIMEM: not an executable (build the aimem target, or carry the build folder over)"
[ -x "$OOM" ] || die "$OOM: not an executable (build the aimem_cuda_oom target)"
# Shared libraries carried beside the build (BUILD_DIR/lib), for a machine
# that lacks aimem's (sqlite3, fmt, vectorscan, ...): copy what `ldd aimem`
# lists there before carrying the folder over.
[ -d "$BUILD/lib" ] && export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if command -v ldd >/dev/null 2>&1; then
  for bin in "$AIMEM" "$OOM"; do
    missing=$(ldd "$bin" 2>&1 | grep 'not found' | awk '{ print $1 }' | tr '\n' ' ')
    [ -z "$missing" ] || die "$bin cannot run here: shared libraries not found: $missing(copy them into $BUILD/lib)"
  done
fi
SMI=${NVIDIA_SMI:-nvidia-smi}
LIBCUDA=${AIMEM_LIBCUDA:-libcuda.so.1}
GPU=${AIMEM_GPU_INDEX:-0}
case $GPU in '' | *[!0-9]*) die "AIMEM_GPU_INDEX=$GPU: not a GPU index" ;; esac
HOLD=${AIMEM_CUDA_OOM_HOLD:-15}  # seconds the OOM program holds the full GPU
case $HOLD in '' | *[!0-9]*) die "AIMEM_CUDA_OOM_HOLD=$HOLD: not a number of seconds" ;; esac
START=$(date +%s)

# ---- What this machine has -------------------------------------------------
echo "device_check: $(uname -srm); bash $BASH_VERSION"
have() { command -v "$1" >/dev/null 2>&1; }
# nvidia-smi on a wedged driver can hang: 20 s at most a call where timeout exists.
smi() { if have timeout; then timeout 20 "$SMI" "$@"; else "$SMI" "$@"; fi; }
smi_path=$(command -v "$SMI" 2>/dev/null || true)
if [ -n "$smi_path" ]; then
  smi_list=$(smi -L 2>&1)
  smi_rc=$?
  [ "$smi_rc" -eq 124 ] && smi_list="nvidia-smi -L did not answer within 20 s (a wedged driver?)"
  echo "device_check: nvidia-smi: $smi_path (exit $smi_rc): ${smi_list%%$'\n'*}"
else
  smi_rc=127
  smi_list="$SMI not found"
  echo "device_check: nvidia-smi: not found"
fi
probe=$("$OOM" --probe --libcuda "$LIBCUDA" --device "$GPU" 2>&1)
probe_rc=$?
probe=$(printf '%s' "${probe##*$'\n'}" | sed 's/^aimem_cuda_oom\[[0-9]*\]: \(SKIP: \)\{0,1\}//')
echo "device_check: libcuda: $probe (exit $probe_rc)"
for t in curl sqlite3 timeout; do
  if have $t; then echo "device_check: $t: $(command -v $t)"; else echo "device_check: $t: absent"; fi
done

if [ "$smi_rc" -ne 0 ] || [ "$probe_rc" -ne 0 ]; then
  echo "SKIP: no NVIDIA GPU here (nvidia-smi: ${smi_list%%$'\n'*}; libcuda: $probe): the GPU device check needs one"
  exit 77
fi
if [ "${AIMEM_GPU_DEVICE_CHECK:-}" != 1 ]; then
  echo "SKIP: a GPU is here (${smi_list%%$'\n'*}) but AIMEM_GPU_DEVICE_CHECK=1 is not set: this check fills GPU $GPU until the driver refuses an allocation"
  exit 77
fi

# ---- With a GPU ----------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aimem-device-check.XXXXXX") || die "cannot make a temporary folder"
WATCH_PID=""
OOM_PID=""
cleanup() {
  # Only what this script started, by PID.
  [ -n "$OOM_PID" ] && kill -TERM "$OOM_PID" 2>/dev/null && wait "$OOM_PID" 2>/dev/null
  [ -n "$WATCH_PID" ] && kill -TERM "$WATCH_PID" 2>/dev/null && wait "$WATCH_PID" 2>/dev/null
  local dest=${AIMEM_DEVICE_CHECK_OUT:-${OUT:-}}
  if [ -n "$dest" ]; then
    mkdir -p "$dest/device_check" && cp -r "$TMP"/. "$dest/device_check/" 2>/dev/null
    echo "device_check: logs copied to $dest/device_check"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ROWS=()
FAILED=0
row() { # CHECK RESULT DETAIL
  ROWS+=("$(printf '%-46s %-5s %s' "$1" "$2" "$3")")
  [ "$2" = FAIL ] && FAILED=1
  echo "device_check: $2 $1: $3"
}
elapsed() { echo $(($(date +%s) - START)); }

# Refuse to fill a GPU someone else is using.
others=$(smi -i "$GPU" --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>&1)
if [ -n "$others" ] && ! printf '%s' "$others" | grep -q 'No running'; then
  echo "device_check: GPU $GPU has compute processes already; not filling it:" >&2
  echo "$others" >&2
  exit 1
fi
smi -i "$GPU" --query-gpu=index,name,driver_version,memory.total,memory.reserved,memory.used --format=csv \
  >"$TMP/nvidia-smi-gpu.csv" 2>&1 || smi -i "$GPU" --query-gpu=index,name,driver_version,memory.total,memory.used \
  --format=csv >"$TMP/nvidia-smi-gpu.csv" 2>&1
sed 's/^/device_check: nvidia-smi: /' "$TMP/nvidia-smi-gpu.csv"

# GET http://127.0.0.1:PORT/PATH: curl where present, else bash's /dev/tcp
# (AIMEM_DEVICE_CHECK_NO_CURL=1 forces that, as on a bare machine), 5 s at most.
tcp_get() {
  exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$2" >&3
  sed '1,/^\r\{0,1\}$/d' <&3
}
http_get() { # PORT PATH
  if have curl && [ -z "${AIMEM_DEVICE_CHECK_NO_CURL:-}" ]; then
    curl -fsS --max-time 5 "http://127.0.0.1:$1$2"
  elif have timeout; then
    timeout 5 bash -c "$(declare -f tcp_get); tcp_get \"\$1\" \"\$2\"" _ "$1" "$2"
  else
    (tcp_get "$1" "$2")
  fi
}

# 1. aimem watch, on a free loopback port.
PORT=""
for try in 0 1 2 3 4; do
  port=$((20000 + ($$ + try * 977) % 20000))
  "$AIMEM" watch --interval 500ms --duration 270s --db "$TMP/watch.db" --alert-log "$TMP/alerts.jsonl" \
    --listen "127.0.0.1:$port" >"$TMP/watch.out" 2>"$TMP/watch.err" &
  WATCH_PID=$!
  for _ in $(seq 1 50); do
    if http_get "$port" /healthz >/dev/null 2>&1; then PORT=$port; break; fi
    kill -0 "$WATCH_PID" 2>/dev/null || break
    sleep 0.2
  done
  [ -n "$PORT" ] && break
  kill -TERM "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null
  WATCH_PID=""
done
if [ -z "$PORT" ]; then
  cat "$TMP/watch.err" >&2
  echo "device_check: aimem watch did not serve /healthz on any of five loopback ports" >&2
  exit 1
fi
echo "device_check: aimem watch (pid $WATCH_PID) serving 127.0.0.1:$PORT"
sleep 1.5  # three samples

# metric NAME LABEL-MATCH FILE: the value of the first series with that label.
metric() { awk -v n="$1" -v m="$2" 'index($0, n "{") == 1 && index($0, m) { print $NF; exit }' "$3"; }

# compare STAGE: per-GPU and per-process readings of aimem /metrics against nvidia-smi.
compare() {
  local stage=$1 m=$TMP/metrics-$1.txt g=$TMP/smi-gpu-$1.csv a=$TMP/smi-apps-$1.csv
  http_get "$PORT" /metrics >"$m" || { row "$stage: /metrics" FAIL "no answer from 127.0.0.1:$PORT"; return; }
  smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits >"$g" 2>&1
  smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >"$a" 2>&1
  local line idx used total aused atotal
  while IFS=', ' read -r idx used total; do
    [ "$idx" = "$GPU" ] || continue
    aused=$(metric aimem_gpu_memory_used_bytes "gpu=\"$idx\"" "$m")
    atotal=$(metric aimem_gpu_memory_total_bytes "gpu=\"$idx\"" "$m")
    if [ -z "$aused" ] || [ -z "$atotal" ]; then
      row "$stage: GPU $idx in /metrics" FAIL "no aimem_gpu_memory_{used,total}_bytes{gpu=\"$idx\"} ($(grep -c '' "$m") lines; watch said: $(tail -n 2 "$TMP/watch.err" | tr '\n' ' '))"
      continue
    fi
    line=$(awk -v a="$atotal" -v s="$total" 'BEGIN { s *= 1048576; d = a - s; if (d < 0) d = -d;
      printf "%s aimem %.1f MiB, nvidia-smi %.1f MiB, off by %.3f%% of total", (d <= 0.01 * s ? "PASS" : "FAIL"), a / 1048576, s / 1048576, 100 * d / s }')
    row "$stage: GPU $idx memory.total" "${line%% *}" "${line#* }"
    line=$(awk -v a="$aused" -v s="$used" -v t="$total" 'BEGIN { s *= 1048576; t *= 1048576; d = a - s; if (d < 0) d = -d;
      printf "%s aimem %.1f MiB, nvidia-smi %.1f MiB, off by %.3f%% of total", (d <= 0.01 * t ? "PASS" : "FAIL"), a / 1048576, s / 1048576, 100 * d / t }')
    row "$stage: GPU $idx memory.used" "${line%% *}" "${line#* }"
  done <"$g"
  local pid mib n=0 seen_oom=no
  while IFS=', ' read -r pid mib; do
    case $pid in '' | *[!0-9]*) continue ;; esac
    n=$((n + 1))
    [ "$pid" = "$OOM_PID" ] && seen_oom=yes
    local sum
    sum=$(awk -v p="pid=\"$pid\"" 'index($0, "aimem_process_gpu_bytes{") == 1 && index($0, p) { s += $NF; f = 1 } END { if (f) print s }' "$m")
    if [ -z "$sum" ]; then
      row "$stage: process $pid GPU memory" FAIL "nvidia-smi lists it with $mib MiB; /metrics has no aimem_process_gpu_bytes{pid=\"$pid\"}"
      continue
    fi
    line=$(awk -v a="$sum" -v s="$mib" 'BEGIN { s *= 1048576; d = a - s; if (d < 0) d = -d; tol = 0.01 * s; if (tol < 1048576) tol = 1048576;
      printf "%s aimem %.1f MiB, nvidia-smi %.1f MiB, off by %.1f MiB", (d <= tol ? "PASS" : "FAIL"), a / 1048576, s / 1048576, d / 1048576 }')
    row "$stage: process $pid GPU memory" "${line%% *}" "${line#* }"
  done <"$a"
  [ "$n" -eq 0 ] && row "$stage: per-process" "-" "nvidia-smi lists no compute process ($(head -c 80 "$a" | tr '\n' ' '))"
  if [ "$stage" = oom ]; then
    if [ "$seen_oom" = yes ]; then
      row "oom: nvidia-smi lists aimem_cuda_oom" PASS "pid $OOM_PID"
    else
      # NVML gives host PIDs: inside a PID namespace the program's own pid differs.
      local apid
      apid=$(awk -v p="pid=\"$OOM_PID\"" 'index($0, "aimem_process_gpu_bytes{") == 1 && index($0, p) { print $NF; exit }' "$m")
      row "oom: nvidia-smi lists aimem_cuda_oom" FAIL "pid $OOM_PID not among nvidia-smi's processes (a PID namespace?); aimem: ${apid:-absent}"
    fi
  fi
}

# 2. Idle.
compare idle

# 3. The OOM, while watch runs.
"$OOM" --device "$GPU" --chunk-mib 256 --hold "$HOLD" --libcuda "$LIBCUDA" >"$TMP/cuda_oom.out" 2>&1 &
OOM_PID=$!
for _ in $(seq 1 300); do  # up to 60 s to fill the GPU
  grep -q 'holding for' "$TMP/cuda_oom.out" && break
  kill -0 "$OOM_PID" 2>/dev/null || break
  sleep 0.2
done
if grep -q 'holding for' "$TMP/cuda_oom.out"; then
  sleep 2  # four samples while it holds
  compare oom
else
  row "oom: aimem_cuda_oom filled GPU $GPU" FAIL "no 'holding' line within 60 s: $(tail -n 3 "$TMP/cuda_oom.out" | tr '\n' ' ')"
fi
wait "$OOM_PID"
oom_rc=$?
OOM_PID_DONE=$OOM_PID
OOM_PID=""
cat "$TMP/cuda_oom.out" | sed 's/^/device_check: aimem_cuda_oom: /'
if [ "$oom_rc" -eq 2 ] && grep -q 'code=2(CUDA_ERROR_OUT_OF_MEMORY)' "$TMP/cuda_oom.out"; then
  row "oom: driver answered CUDA_ERROR_OUT_OF_MEMORY" PASS "$(grep -o 'holding [0-9]* bytes ([0-9.]* GiB)' "$TMP/cuda_oom.out" | head -n 1)"
else
  row "oom: driver answered CUDA_ERROR_OUT_OF_MEMORY" FAIL "exit $oom_rc: $(grep 'CUDA error' "$TMP/cuda_oom.out" | head -n 1)"
fi

# 4a. The alert: GPU past 95% (headroom:gpu:N).
for _ in $(seq 1 20); do
  grep -q "\"headroom:gpu:$GPU\"" "$TMP/alerts.jsonl" 2>/dev/null && break
  sleep 0.5
done
if grep -q "\"headroom:gpu:$GPU\"" "$TMP/alerts.jsonl" 2>/dev/null; then
  row "alert log: GPU headroom alert" PASS "$(grep -o '"message":"[^"]*"' "$TMP/alerts.jsonl" | grep "GPU $GPU" | head -n 1)"
else
  row "alert log: GPU headroom alert" FAIL "no headroom:gpu:$GPU in $(grep -c '' "$TMP/alerts.jsonl" 2>/dev/null || echo 0) alert lines"
fi

# Stop watch so that its store is complete.
kill -TERM "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID"
watch_rc=$?
WATCH_PID=""
tail -n 3 "$TMP/watch.err" | sed 's/^/device_check: watch: /'
[ "$watch_rc" -eq 0 ] || row "watch: exit status" FAIL "$watch_rc"

# 4b. The store.
# The store keys an alert by its pool: kind "alert", key "gpu:N".
if "$AIMEM" report "$TMP/watch.db" --json >"$TMP/report.json" 2>"$TMP/report.err"; then
  if tr -d ' \n' <"$TMP/report.json" | grep -q "{\"key\":\"gpu:$GPU\",\"kind\":\"alert\""; then
    row "store: alert event (aimem report --json)" PASS "kind alert, key gpu:$GPU"
  else
    row "store: alert event (aimem report --json)" FAIL "no event of kind alert with key gpu:$GPU ($(grep -c '"kind"' "$TMP/report.json") events)"
  fi
else
  row "store: alert event (aimem report --json)" FAIL "aimem report: $(head -c 200 "$TMP/report.err")"
fi
if have sqlite3; then
  n=$(sqlite3 "$TMP/watch.db" "select count(*) from events where kind = 'alert' and key = 'gpu:$GPU'" 2>&1)
  case $n in
    '' | *[!0-9]*) row "store: events table (sqlite3)" "-" "not read: $n" ;;
    0) row "store: events table (sqlite3)" FAIL "no alert row with key gpu:$GPU" ;;
    *) row "store: events table (sqlite3)" PASS "$n alert row(s) with key gpu:$GPU" ;;
  esac
fi

# 4c. aimem diagnose on the OOM program's output.
"$AIMEM" diagnose --json "$TMP/cuda_oom.out" >"$TMP/diagnose.json" 2>"$TMP/diagnose.err"
"$AIMEM" diagnose "$TMP/cuda_oom.out" >"$TMP/diagnose.txt" 2>&1
if grep -q '"layer": *"gpu_vram"' "$TMP/diagnose.json"; then
  row "diagnose: layer" PASS gpu_vram
else
  row "diagnose: layer" FAIL "$(grep -o '"layer": *"[a-z_]*"' "$TMP/diagnose.json" | head -n 1) $(head -c 200 "$TMP/diagnose.err")"
fi
# The failure line it quotes starts "aimem_cuda_oom[PID]:".
if grep -q "aimem_cuda_oom\[$OOM_PID_DONE\]" "$TMP/diagnose.txt"; then
  row "diagnose: names the process" PASS "aimem_cuda_oom[$OOM_PID_DONE] in its evidence"
else
  row "diagnose: names the process" FAIL "no aimem_cuda_oom[$OOM_PID_DONE] in its output"
fi
# Its structured process field: informational (the CUDA recognizer reads no pid).
proc=$(grep -o '"process": *[^,]*' "$TMP/diagnose.json" | head -n 1)
row "diagnose: --json process field" "-" "${proc:-absent}"
sed 's/^/device_check: diagnose: /' "$TMP/diagnose.txt" | head -n 20

# ---- Summary -----------------------------------------------------------------
echo
echo "GPU device check ($(elapsed) s; $(head -n 2 "$TMP/nvidia-smi-gpu.csv" | tail -n 1))"
printf '%-46s %-5s %s\n' CHECK RESULT DETAIL
for r in "${ROWS[@]}"; do echo "$r"; done
if [ "$FAILED" -ne 0 ]; then
  echo "device_check: FAILED"
  exit 1
fi
echo "device_check: all checks passed"
exit 0
