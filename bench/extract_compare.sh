#!/usr/bin/env bash
# Runs bench/extract_bench in every mode, REPEATS interleaved rounds, and prints medians:
# the measurement behind the choice of clang_indexSourceFile with a shared skip-bodies session.
#   bench/extract_compare.sh BUILD_DIR [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: extract_compare.sh BUILD_DIR [REPEATS]}
repeats=${2:-3}
bench=${EXTRACT_BENCH:-$root/build-release/bench/extract_bench}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= repeats; r++)); do
  for run in "parse 1" "visit 1" "index 1" "index-skip 1" "index 2" "index-skip 2" "index-skip-per-thread 2"; do
    set -- $run
    "$bench" -p "$build" --mode "$1" --threads "$2" 2>/dev/null >>"$out"
  done
done
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    rows.setdefault((f["mode"], int(f["threads"])), []).append(f)
print(f"{'mode':<22} {'threads':>7} {'wall s':>8} {'user s':>8} {'sys s':>7} {'decls':>9} {'refs':>8} runs")
for (mode, t), r in rows.items():
    med = lambda k: statistics.median(float(x[k]) for x in r)
    print(f"{mode:<22} {t:>7} {med('wall'):8.2f} {med('user'):8.2f} {med('sys'):7.2f} "
          f"{int(med('decls')):>9} {int(med('refs')):>8} {len(r)}")
PY
