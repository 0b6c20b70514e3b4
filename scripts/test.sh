#!/usr/bin/env bash
# README command 2: install, build and run the whole test suite: the normal build, then the
# store/indexer/daemon tests under ThreadSanitizer and under AddressSanitizer+UndefinedBehavior-
# Sanitizer (the daemon tests run the instrumented symdexd as their child process), and the
# libFuzzer targets for 60 s each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
jobs=$(nproc)
# Each ctest run below has --timeout 900: a test without a limit of its own fails then instead of
# holding the run (tests/CMakeLists.txt gives each Catch2 test 600 s).

section() { printf '\n=== %s\n' "$*"; }

section "formatting: every C++ file as .clang-format says"
# clang-format 14, Debian's (scripts/install-deps.sh); a drifted file fails the run.
mapfile -t sources < <(cd "$root" && git ls-files '*.cpp' '*.h')
(cd "$root" && clang-format --dry-run --Werror "${sources[@]}") ||
  { echo "test.sh: run clang-format -i on the files above" >&2; exit 1; }
echo "${#sources[@]} files formatted"

section "build and test (RelWithDebInfo)"
BUILD_DIR="$root/build" "$root/scripts/build.sh"
# The chart's Qt Gui and Svg are symdex-bench's alone (issue 11).
for binary in symdex symdex-index symdexd symdex-worker; do
  libraries=$(ldd "$root/build/cli/$binary")
  if grep -q "libQt6Gui\|libQt6Svg" <<<"$libraries"; then
    echo "test.sh: $binary links Qt Gui or Svg; only symdex-bench may" >&2; exit 1
  fi
done
# No program links libclang and libLLVM: a parse loads them when it starts (indexer/libclang.h),
# so that symdex's queries and symdexd's serving start without them (issue 17).
for binary in symdex symdex-index symdexd symdex-worker; do
  libraries=$(ldd "$root/build/cli/$binary")
  if grep -q "libclang\|libLLVM" <<<"$libraries"; then
    echo "test.sh: $binary links libclang or libLLVM; it must load them only to parse" >&2
    exit 1
  fi
done
(cd "$root/build" && ctest -j"$jobs" --timeout 900 --output-on-failure)

section "ThreadSanitizer: store, indexer, daemon and bench-core tests, against a TSan-instrumented libtbb"
tbb_libdir=$("$root/scripts/tsan-tbb.sh" | tail -n1)
BUILD_TYPE=Debug BUILD_DIR="$root/build-thread" "$root/scripts/build.sh" \
  -DSYMDEX_SANITIZE=thread -DSYMDEX_TESTS_ONLY=ON -DSYMDEX_TSAN_TBB_LIBDIR="$tbb_libdir"
# The whole point of that libtbb: make sure the tests really load it.
for binary in tests/index_test cli/symdexd cli/symdex-worker; do
  # Not `ldd | grep -q`: grep's early exit can kill ldd with SIGPIPE, and pipefail fails the check.
  libraries=$(ldd "$root/build-thread/$binary")
  grep -q "$tbb_libdir/libtbb.so.12" <<<"$libraries" ||
    { echo "test.sh: the TSan $binary does not load $tbb_libdir/libtbb.so.12" >&2; exit 1; }
done
(cd "$root/build-thread" && ctest -j"$jobs" --timeout 900 --output-on-failure)

section "AddressSanitizer + UndefinedBehaviorSanitizer: store, indexer, daemon and bench-core tests"
BUILD_TYPE=Debug BUILD_DIR="$root/build-address" "$root/scripts/build.sh" \
  -DSYMDEX_SANITIZE=address -DSYMDEX_TESTS_ONLY=ON
# The tests run with ASAN_OPTIONS=intercept_tls_get_addr=0 (tests/CMakeLists.txt says why;
# the ThreadSanitizer tests above set it in TSAN_OPTIONS for the same reason).
(cd "$root/build-address" && ctest -j"$jobs" --timeout 900 --output-on-failure)

section "libFuzzer: LSP framing and JSON-RPC, store records, compile databases (60 s each)"
"$root/scripts/fuzz.sh" 60
