#!/usr/bin/env bash
# Kill anywhere, lose nothing, on LevelDB (issue 10): tests/faults/kill_anywhere_lib.sh's kills
# on a copy of LevelDB's sources (bench/corpus.sh leveldb), with these edits:
# - header: util/coding.h and db/dbformat.h gain (or lose) a first line `#include <deque>`,
#   shifting every position in them and changing the file list of the TUs that include them.
# - macro: port/thread_annotations.h's THREAD_ANNOTATION_ATTRIBUTE__(x) becomes a no-op (or
#   __attribute__((x)) again), so GUARDED_BY(mutex_) in the .cc files stops (starts) referencing
#   mutex_.
# - remove / add: db/version_set.cc leaves the compile database or comes back.
# Prints a line per kill and the figures: kills, dumps equal to a clean index, time.
# Usage: bench/kill_anywhere.sh SYMDEX SYMDEXD [KILLS]    (KILLS default 50)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
    echo "usage: bench/kill_anywhere.sh SYMDEX SYMDEXD [KILLS]" >&2
    exit 2
fi
build=$("$here/corpus.sh" leveldb | tail -n1)
corpus_src=$(cd "$build/../src" && pwd)

tree_header_variant=0
tree_macro_noop=0
tree_removed=0
tree_removed_tu=db/version_set.cc

tree_write_db() {
    python3 - "$tree_root/compile_commands.full.json" "$tree_db" "$tree_root/$tree_removed_tu" \
        "$tree_removed" <<'PY'
import json, os, sys
full, out, removed, remove = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
entries = [e for e in json.load(open(full)) if not (remove and e["file"] == removed)]
json.dump(entries, open(out + ".tmp", "w"), indent=1)
os.replace(out + ".tmp", out)
PY
}

tree_create() { # DIR
    mkdir -p "$1"
    tree_root=$1/leveldb
    tree_db=$1/compile_commands.json
    cp -r "$corpus_src" "$tree_root"
    sed "s|$corpus_src|$tree_root|g" "$build/compile_commands.json" >"$tree_root/compile_commands.full.json"
    tree_write_db
}

tree_apply() { # cold|header|macro|remove|add
    local f
    case $1 in
    cold) ;;
    header)
        tree_header_variant=$((1 - tree_header_variant))
        for f in util/coding.h db/dbformat.h; do
            if [ "$tree_header_variant" = 1 ]; then
                sed -i '1i #include <deque>  // symdex kill probe' "$tree_root/$f"
            else
                sed -i '1{/symdex kill probe/d}' "$tree_root/$f"
            fi
        done
        ;;
    macro)
        tree_macro_noop=$((1 - tree_macro_noop))
        if [ "$tree_macro_noop" = 1 ]; then
            sed -i 's|^#define THREAD_ANNOTATION_ATTRIBUTE__(x) __attribute__((x))$|#define THREAD_ANNOTATION_ATTRIBUTE__(x)  // symdex kill probe|' \
                "$tree_root/port/thread_annotations.h"
        else
            sed -i 's|^#define THREAD_ANNOTATION_ATTRIBUTE__(x)  // symdex kill probe$|#define THREAD_ANNOTATION_ATTRIBUTE__(x) __attribute__((x))|' \
                "$tree_root/port/thread_annotations.h"
        fi
        ;;
    remove) tree_removed=1 && tree_write_db ;;
    add) tree_removed=0 && tree_write_db ;;
    *) echo "tree_apply: unknown scenario '$1'" >&2 && return 2 ;;
    esac
}

tree_state() { echo "h${tree_header_variant}-m${tree_macro_noop}-r${tree_removed}"; }

# shellcheck source=../tests/faults/kill_anywhere_lib.sh
. "$here/../tests/faults/kill_anywhere_lib.sh"
ka_main "$1" "$2" "${3:-50}"
