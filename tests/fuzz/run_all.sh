#!/bin/bash
# Runs every libFuzzer target for SECONDS each, JOBS at a time (make fuzz).
#   run_all.sh BUILD_DIR SECONDS JOBS NAME...
# Each target's seeds: tests/fuzz/<name>_corpus (diagnose: tests/fuzz/corpus),
# and captured outputs for some. New inputs go to BUILD_DIR/corpus/NAME; the
# seeds in the repository are only read. A crash, a leak, a 10 s input or one
# allocation over 256 MB fails the run. (The RSS limit is libFuzzer's 2 GB:
# ASan's quarantine of freed memory alone holds up to 256 MB; the memory bound
# on each input is the cgroup test's, tests/cli/memory_cgroup_test.cc.)
# Targets run side by side because each is one single-threaded process: on CI's
# two cores, two at a time halve the wall time of the stage. Each target's log
# is printed whole when it ends, so the output never interleaves.
set -u
build=$1 seconds=$2 jobs=$3
shift 3
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

seeds_of() {
  case $1 in
    diagnose) echo tests/fuzz/corpus ;;
    promtext) echo "tests/fuzz/promtext_corpus tests/fixtures/watch/metrics" ;;
    structured) echo "tests/fuzz/structured_corpus tests/fixtures/check" ;;
    *) echo "tests/fuzz/$1_corpus" ;;
  esac
}

run_one() {
  local f=$1
  mkdir -p "$build/corpus/$f"
  # shellcheck disable=SC2046 # the seed folders are words by design
  "./$build/tests/${f}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -print_final_stats=1 "$build/corpus/$f" $(seeds_of "$f") > "$logs/$f.log" 2>&1
}

declare -A pid_of
failed=()
finish() {  # waits for the target named $1 and prints its log
  local f=$1
  if wait "${pid_of[$f]}"; then status=ok; else status=FAILED; failed+=("$f"); fi
  echo "fuzz: $f for $seconds s: $status"
  if [ "$status" = FAILED ]; then cat "$logs/$f.log"; else grep -E '^stat::|Done [0-9]+ runs' "$logs/$f.log"; fi
  unset "pid_of[$f]"
}

queue=("$@")
running=()
for f in "${queue[@]}"; do
  if [ "${#running[@]}" -ge "$jobs" ]; then
    finish "${running[0]}"
    running=("${running[@]:1}")
  fi
  run_one "$f" &
  pid_of[$f]=$!
  running+=("$f")
done
for f in "${running[@]}"; do finish "$f"; done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#queue[@]} targets ran $seconds s each without a finding"
