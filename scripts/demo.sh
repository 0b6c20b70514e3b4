#!/usr/bin/env bash
# README command 1: install, build, then index a real tree (symdex's own sources, through the
# compile database its CMake build exports) and show a few queries.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
BUILD_TYPE=Release BUILD_DIR="$root/build-release" "$root/scripts/build.sh" -DSYMDEX_BUILD_TESTS=OFF
symdex="$root/build-release/cli/symdex"

cd "$root"
run() { printf '\n$ symdex %s\n' "$*"; "$symdex" "$@"; }
run index -p build-release
run stats
run find SymbolStore --limit 5
run def symdex::SymbolStore::open
run refs symdex::hash64
run symbols store/outline.h
