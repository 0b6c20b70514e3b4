#!/usr/bin/env bash
# README command 2: install, build and run the whole test suite: the normal build, then the
# store/indexer tests under ThreadSanitizer and under AddressSanitizer+UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
jobs=$(nproc)

section() { printf '\n=== %s\n' "$*"; }

section "build and test (RelWithDebInfo)"
BUILD_DIR="$root/build" "$root/scripts/build.sh"
(cd "$root/build" && ctest -j"$jobs" --output-on-failure)

for sanitizer in thread address; do
  section "build and test under the ${sanitizer} sanitizer"
  BUILD_TYPE=Debug BUILD_DIR="$root/build-$sanitizer" "$root/scripts/build.sh" \
    -DSYMDEX_SANITIZE="$sanitizer" -DSYMDEX_TESTS_ONLY=ON
  (cd "$root/build-$sanitizer" && ctest -j"$jobs" --output-on-failure)
done
