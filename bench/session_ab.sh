#!/usr/bin/env bash
# A/B of libclang's skip-bodies session modes: `symdex index --session shared|per-thread`, cold,
# ROUNDS rounds in alternating order, and the medians.
#   bench/session_ab.sh BUILD_DIR [ROUNDS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: session_ab.sh BUILD_DIR [ROUNDS] [THREADS]}
rounds=${2:-10}
threads=${3:-2}
symdex=${SYMDEX:-$root/build-release/cli/symdex}
out=$(mktemp)
store=$(mktemp -d)
trap 'rm -rf "$out" "$store"' EXIT
for ((r = 0; r < rounds; r++)); do
  order=(shared per-thread)
  ((r % 2)) && order=(per-thread shared)
  for s in "${order[@]}"; do
    rm -rf "$store/s"
    /usr/bin/time -f "$s %e %U %S" -a -o "$out" \
      "$symdex" index -p "$build" --store "$store/s" --threads "$threads" --session "$s" -q >/dev/null 2>&1
  done
done
python3 - "$out" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    k, w, u, s = line.split()
    d.setdefault(k, []).append((float(w), float(u), float(s)))
for k, v in sorted(d.items()):
    print(f"{k:<11} runs {len(v)}  wall median {statistics.median(x[0] for x in v):.2f} s"
          f"  user median {statistics.median(x[1] for x in v):.2f} s"
          f"  sys median {statistics.median(x[2] for x in v):.2f} s")
PY
