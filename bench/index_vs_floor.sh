#!/usr/bin/env bash
# symdex's cold index against the parse-only floor, side by side in one run.
#   bench/index_vs_floor.sh BUILD_DIR [REPEATS] [THREADS...]
# For each thread count: a cold `symdex index` into a fresh store, and bench/floor.sh
# (`clang++ -fsyntax-only` per TU) with as many jobs; REPEATS rounds (default 3), interleaved so
# that machine noise hits both alike. Prints medians (min-max) of wall, user and sys seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: index_vs_floor.sh BUILD_DIR [REPEATS] [THREADS...]}
repeats=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
symdex=${SYMDEX:-$root/build-release/cli/symdex}
[ -x "$symdex" ] || { echo "index_vs_floor.sh: build symdex first (scripts/demo.sh or scripts/build.sh)" >&2; exit 2; }

results=$(mktemp)
store=$(mktemp -d)
trap 'rm -rf "$results" "$store"' EXIT
for ((r = 1; r <= repeats; r++)); do
  for t in "${threads[@]}"; do
    rm -rf "$store/s"
    /usr/bin/time -f "symdex $t %e %U %S" -a -o "$results" \
      "$symdex" index -p "$build" --store "$store/s" --threads "$t" -q >/dev/null 2>&1
    "$root/bench/floor.sh" "$build" "$t" 2>&1 | sed -n 's/^floor: jobs=\([0-9]*\) tus=[0-9]* wall=\([0-9.]*\) user=\([0-9.]*\) sys=\([0-9.]*\).*/floor \1 \2 \3 \4/p' >>"$results"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) != 5 or parts[0] not in ("symdex", "floor"):
        continue
    who, t, wall, user, sys_ = parts[0], int(parts[1]), *map(float, parts[2:])
    rows.setdefault((t, who), []).append((wall, user, sys_))
def fmt(values):
    return f"{statistics.median(values):6.2f} ({min(values):.2f}-{max(values):.2f})"
print(f"{'threads':>7} {'what':<14} {'wall s':>20} {'user s':>20} {'sys s':>18}  runs")
for (t, who) in sorted(rows):
    r = rows[(t, who)]
    name = "symdex index" if who == "symdex" else "clang -fsyntax"
    print(f"{t:>7} {name:<14} {fmt([x[0] for x in r]):>20} {fmt([x[1] for x in r]):>20} {fmt([x[2] for x in r]):>18}  {len(r)}")
for t in sorted({t for t, _ in rows}):
    if (t, "symdex") in rows and (t, "floor") in rows:
        s = statistics.median(x[0] for x in rows[(t, "symdex")])
        f = statistics.median(x[0] for x in rows[(t, "floor")])
        print(f"threads {t}: symdex wall / floor wall = {s / f:.2f}")
PY
