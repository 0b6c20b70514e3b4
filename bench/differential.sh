#!/usr/bin/env bash
# The differential test at length (issue 18): tests/differential/differential.sh for one seed,
# 5,000 steps by default, every kind of change. Prints each mismatch (seed, step, kind, the first
# differing dump lines) and the summary: checks and mismatches per kind. A seed that fails here
# becomes a named regression test in tests/CMakeLists.txt ("differential: regression seed N").
# Usage: bench/differential.sh SEED [STEPS] [cli|daemon] [differential.sh options...]
#   $SYMDEX and $SYMDEXD name the binaries (default: build/cli/ of this checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
    echo "usage: bench/differential.sh SEED [STEPS] [cli|daemon] [differential.sh options...]" >&2
    exit 2
fi
seed=$1 steps=${2:-5000} mode=${3:-cli}
shift $(($# < 3 ? $# : 3))
symdex=${SYMDEX:-$here/../build/cli/symdex}
symdexd=${SYMDEXD:-$here/../build/cli/symdexd}
for b in "$symdex" "$symdexd"; do
    [ -x "$b" ] || { echo "bench/differential.sh: '$b' is not an executable; build it or set SYMDEX/SYMDEXD" >&2 && exit 2; }
done
exec "$here/../tests/differential/differential.sh" "$symdex" "$symdexd" --seeds "$seed" --steps "$steps" \
    --mode "$mode" "$@"
