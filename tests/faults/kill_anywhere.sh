#!/usr/bin/env bash
# Kill anywhere, lose nothing (issue 10): kills `symdex index` (SIGKILL) and symdexd (SIGKILL,
# SIGTERM) at KILLS moments spread over a cold index and four incremental edits of a generated
# tree (fixture_tree.sh), recovers, and requires `symdex dump` of the store to equal a clean
# index's, byte for byte (kill_anywhere_lib.sh says how). Fails on any difference.
# Usage: kill_anywhere.sh SYMDEX SYMDEXD [KILLS]    (KILLS default 25, five per scenario)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
    echo "usage: kill_anywhere.sh SYMDEX SYMDEXD [KILLS]" >&2
    exit 2
fi
# shellcheck source=fixture_tree.sh
. "$here/fixture_tree.sh"
# shellcheck source=kill_anywhere_lib.sh
. "$here/kill_anywhere_lib.sh"
ka_main "$1" "$2" "${3:-25}"
