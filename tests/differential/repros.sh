#!/usr/bin/env bash
# The smallest command sequences behind each class of mismatch differential.sh found (issue 18),
# one function each: build a two-file tree, index, make one change, index again, and compare
# `symdex dump` with a clean index of the changed tree. Prints "equal" or "DIFFERS" (with the
# first differing lines) per repro; exits 1 when any differs.
# Usage: repros.sh SYMDEX [NAME...]    (names: the functions below without rp_; default all)
set -euo pipefail
export LC_ALL=C
[ $# -ge 1 ] || { echo "usage: repros.sh SYMDEX [NAME...]" >&2 && exit 2; }
symdex=$(realpath "$1")
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/symdex-repros-XXXXXX")
trap 'rm -rf "$work"' EXIT

db() { # SOURCE:FLAGS... -> compile_commands.json in the current directory
    local e first=1
    {
        echo '['
        for e in "$@"; do
            [ "$first" = 1 ] || echo ','
            first=0
            local f=${e%%:*} flags=${e#*:} a
            printf '{"directory": "%s", "file": "%s", "arguments": ["c++", "-std=c++17"' "$PWD" "$f"
            for a in $flags; do printf ', "%s"' "$a"; done
            printf ', "-c", "%s"]}' "$f"
        done
        echo ']'
    } >compile_commands.json
}
index() { "$symdex" index -p . --store "${1:-.symdex}" --threads 1 -q >/dev/null 2>&1; }
verdict() { # NAME: the store against a clean index
    rm -rf clean && index clean
    if cmp -s <("$symdex" dump --store .symdex) <("$symdex" dump --store clean); then
        echo "$1: equal"
    else
        echo "$1: DIFFERS"
        diff <("$symdex" dump --store clean) <("$symdex" dump --store .symdex) | head -n 8 | sed 's/^/    /' || true
        failed=1
    fi
}

# Issue 3: an equal-size edit that keeps the modification time is never seen.
rp_keep_stamp() {
    printf '#pragma once\nint alpha();\n' >h.h
    printf '#include "h.h"\nint use() { return 1; }\n' >a.cpp
    db a.cpp:
    index
    touch -r h.h stamp && sed -i s/alpha/gamma/ h.h && touch -r stamp h.h
    index
}

# Issue 1: a header that did not exist (a generated one, under __has_include) appears.
rp_generated_header() {
    mkdir -p gen
    printf '#if __has_include("gen/g.h")\n#include "gen/g.h"\n#endif\nint use() { return 1; }\n' >a.cpp
    db a.cpp:-I.
    index
    printf '#pragma once\nint generated();\n' >gen/g.h
    index
}

# The same class: a header moved away (the TU re-parses with "file not found") and back.
rp_move_back() {
    printf '#pragma once\nint alpha();\n' >h.h
    printf '#include "h.h"\nint use() { return alpha(); }\n' >a.cpp
    db a.cpp:
    index
    mv h.h ../h.away && index && mv ../h.away h.h
    index
}

# A header appears earlier in the include path and shadows the one the TU read.
rp_shadow_header() {
    mkdir -p include0 include
    printf '#pragma once\nint alpha();\n' >include/h.h
    printf '#include "h.h"\nint use() { return 1; }\n' >a.cpp
    db "a.cpp:-Iinclude0 -Iinclude"
    index
    printf '#pragma once\nint shadowing();\n' >include0/h.h
    index
}

# An included symlink is retargeted: the TU read the old target, whose file did not change.
rp_retarget_symlink() {
    printf '#pragma once\nint target_a();\n' >a.h
    printf '#pragma once\nint target_b();\n' >b.h
    ln -s a.h cfg.h
    printf '#include "cfg.h"\nint use() { return 1; }\n' >a.cpp
    db a.cpp:
    index
    ln -sfn b.h cfg.h
    index
}

# The same, when the TU also includes the link's target by its own name (one file entry, two
# names; the name libclang keeps for it is the first one looked up).
rp_retarget_symlink_both_names() {
    printf '#pragma once\nint target_a();\n' >a.h
    printf '#pragma once\nint target_b();\n' >b.h
    ln -s a.h cfg.h
    printf '#include "a.h"\n#include "cfg.h"\nint use() { return 1; }\n' >a.cpp
    db a.cpp:
    index
    ln -sfn b.h cfg.h
    index
}

# An include directory that is a symlink is retargeted (a branch of generated headers, say).
rp_retarget_symlinked_directory() {
    mkdir -p v1 v2
    printf '#pragma once\nint version_one();\n' >v1/cfg.h
    printf '#pragma once\nint version_two();\n' >v2/cfg.h
    ln -s v1 current
    printf '#include "cfg.h"\nint use() { return 1; }\n' >a.cpp
    db a.cpp:-Icurrent
    index
    ln -sfn v2 current
    index
}

# Issue 2: a header's records follow the flags of the TU that owns (extracted) it.
rp_owner_flags() {
    printf '#pragma once\n#ifdef MODE_A\nint mode_a_fn();\n#else\nint mode_b_fn();\n#endif\n' >h.h
    printf '#include "h.h"\nint a() { return 1; }\n' >a.cpp
    printf '#include "h.h"\nint b() { return 2; }\n' >b.cpp
    db a.cpp:-DMODE_A b.cpp:
    index
    db a.cpp: b.cpp:
    index
}

# The same class: the owner leaves the database (the file stays; or it is deleted, or renamed).
rp_owner_leaves() {
    printf '#pragma once\n#ifdef MODE_A\nint mode_a_fn();\n#else\nint mode_b_fn();\n#endif\n' >h.h
    printf '#include "h.h"\nint a() { return 1; }\n' >a.cpp
    printf '#include "h.h"\nint b() { return 2; }\n' >b.cpp
    db a.cpp:-DMODE_A b.cpp:
    index
    db b.cpp:
    index
}

# The same class: a new TU that ranks before the owner includes the header (a source added, or
# an #include added to an existing one).
rp_owner_added() {
    printf '#pragma once\n#ifdef MODE_A\nint mode_a_fn();\n#else\nint mode_b_fn();\n#endif\n' >h.h
    printf '#include "h.h"\nint b() { return 2; }\n' >b.cpp
    printf '#include "h.h"\nint a() { return 1; }\n' >a.cpp
    db b.cpp:
    index
    db a.cpp:-DMODE_A b.cpp:
    index
}

# The same class: a header's references depend on other headers of its TU. cfg.h goes away; the
# TU re-parses, h.h (unchanged) is not extracted again and keeps its reference to CFG_VALUE.
rp_header_context() {
    printf '#pragma once\n#define CFG_VALUE 1\n' >cfg.h
    printf '#pragma once\n#include "cfg.h"\ninline int body() { return CFG_VALUE; }\n' >h.h
    printf '#include "h.h"\nint a() { return body(); }\n' >a.cpp
    db a.cpp:
    index
    mv cfg.h ../cfg.away
    index
}

# A TU's error count depends on its libclang session: an error in an inline function body of a
# header another TU of the same session parsed first is not counted (the body was skipped). On
# one thread a clean index parses a.cpp then b.cpp; after an edit of b.cpp only b.cpp is parsed.
rp_skipped_body_errors() {
    printf '#pragma once\ninline int broken() { return undeclared_alpha; }\n' >h.h
    printf '#include "h.h"\nint a() { return 1; }\n' >a.cpp
    printf '#include "h.h"\nint b() { return 2; }\n' >b.cpp
    db a.cpp: b.cpp:
    index
    printf '#include "h.h"\nint b() { return 3; }\n' >b.cpp
    index
}

failed=0
names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(declare -F | sed -n 's/^declare -f rp_//p')
for n in "${names[@]}"; do
    declare -F "rp_$n" >/dev/null || { echo "repros.sh: no repro '$n'" >&2 && exit 2; }
    mkdir -p "$work/$n" && cd "$work/$n"
    "rp_$n"
    verdict "$n"
done
exit "$failed"
