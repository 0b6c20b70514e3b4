#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang-16, ASan and UBSan into build-fuzz/ and runs
# each for SECONDS (default 60), starting from its seed corpus tests/fuzz/<target>/. The fuzzers
# work on a copy of the seeds in build-fuzz/corpus/, so the repository is not touched; a crashing
# input is left in build-fuzz/crashes/<target>/ (keep it as a seed once fixed). Prints per target
# the executions run and the crashes found; exits non-zero if any target crashed.
#
#   scripts/fuzz.sh [SECONDS [TARGET...]]     targets: protocol records compile_db (default: all)
#   FUZZ_BUILD_DIR overrides build-fuzz/
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
targets=(protocol records compile_db)
[ $# -gt 1 ] && targets=("${@:2}")

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang-16 CXX=clang++-16 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSYMDEX_FUZZ=ON -DSYMDEX_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
ninja -C "$build" "${targets[@]/%/_fuzzer}"

failed=0
summary=()
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target
  crashes=$build/crashes/$target
  log=$build/$target.log
  rm -rf "$corpus" "$crashes"
  mkdir -p "$corpus" "$crashes"
  cp "$root/tests/fuzz/$target"/* "$corpus/"
  echo "fuzzing $target for ${seconds} s (log: $log)" >&2
  status=0
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/${target}_fuzzer" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  found=$(find "$crashes" -type f | wc -l)
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
    failed=1
    [ "$found" -eq 0 ] && found="1 (exit $status, no artifact)"
    grep -E "ERROR|runtime error|_fuzzer: |SUMMARY" "$log" | head -n 5 >&2 || true
    ls "$crashes" >&2
  fi
  summary+=("$(printf '%-12s executions %-10s crashes %s' "$target" "${execs:-?}" "$found")")
done
printf '%s\n' "${summary[@]}"
exit "$failed"
