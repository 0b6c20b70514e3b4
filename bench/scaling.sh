#!/usr/bin/env bash
# The "Scaling" measurement of docs/measurements.md in one command: fetch and configure the corpus,
# install the peers, build a Release symdex, and run `symdex bench` on it. Run it on a quiet
# machine: it is a measurement (symdex indexes under SCHED_IDLE, so its query client stays ahead of
# its parse threads whatever the load, but the wall times of symdex and the peers feel every
# neighbour).
#   bench/scaling.sh [CORPUS] [symdex bench options...]
# CORPUS is a bench/corpus.sh name (default leveldb); the options default to that page's:
#   --threads 1,2,4 --lock-mode per-file,global --repeat 3 --peers floor,ccls,clangd
# Results, chart and logs go to bench/out/CORPUS (git-ignored) unless --out says otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-leveldb}
shift $(( $# > 0 ? 1 : 0 ))
options=("$@")
[ ${#options[@]} -gt 0 ] ||
  options=(--threads 1,2,4 --lock-mode per-file,global --repeat 3 --peers floor,ccls,clangd)
build=$("$root/bench/corpus.sh" "$corpus" | tail -n1)
"$root/bench/peers.sh"
"$root/scripts/install-deps.sh"
BUILD_TYPE=Release BUILD_DIR="$root/build-release" "$root/scripts/build.sh" -DSYMDEX_BUILD_TESTS=OFF
out=$root/bench/out/$corpus
set -x
"$root/build-release/cli/symdex" bench -p "$build" --out "$out" "${options[@]}"
