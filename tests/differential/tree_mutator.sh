# The differential test's tree and its seeded random changes (issue 18): sourced by
# differential.sh, not run. Defines mt_create DIR (the initial tree), mt_mutate KIND (one change
# of that kind, described in $mt_desc; a kind with two moments, move-away-back, leaves the second
# half in $mt_then for the caller to apply after checking the first), mt_applicable KIND, and the
# kind list mt_all_kinds.
#
# Everything is decided by mt_rand, a 32-bit LCG seeded by mt_seed, and by sorted listings
# (LC_ALL=C), never by the file system's order or by time: a seed replays the same changes on any
# machine, in either mode (CLI or daemon).
#
# The tree (ROOT):
#   compile_commands.json      every entry: c++ -std=c++17 [-Iextra] [-Iinclude0] -Iinclude
#                              [-DMODE_A] [-DLEVEL=N] [-DPICK_gamma] [-std=bogus] -c src/sN.cpp
#                              (-std=bogus: tu-fail, a TU libclang refuses)
#   include/common.h           included by every TU; its declarations follow -DPICK_*, -DLEVEL and
#                              the sources' own `#define PICK_<word>` (the owner TU's macros)
#   include/hN.h               headers shared by several TUs; declarations under #ifdef MODE_A
#   include/cfg.h              a symlink to variants/cfg_a.h or cfg_b.h
#   include/plat               a symlink to the directory plat_a or plat_b (include "plat/plat.h")
#   include/gen/gK.h           generated headers, absent at first: some TUs include them under
#                              __has_include, one plainly (a "file not found" until it exists)
#   include0/, src/            where a shadowing hN.h may appear (searched before include/)
#   extra/h1.h                 shadows include/h1.h for an entry given -Iextra
#   src/sN.cpp                 the sources
# Lines a change may edit end in a marker: `// body`, `// decl`, `// macro`, or `// define` (a
# source's `#define PICK_<word>` before its includes, which common.h tests). An edit swaps one
# word of a pool for another in such a line; words of equal length keep the size. No edit but
# header-body-error puts an error in a header's inline function body: whether such an error is
# counted depends on whether the TU's libclang session skipped that body (it had parsed the
# header for an earlier TU), so a clean index counts it by thread count and TU order.

mt_all_kinds=(edit-body edit-decl edit-macro edit-keep-stamp source-define header-body-error
    add-header remove-header rename-header add-source remove-source rename-source generated-header
    shadow-header retarget-symlink flag-define flag-include db-entry move-away-back tu-fail)

mt_words=(alpha gamma delta kappa sigma beta zeta iota lambda)

mt_rand_state=1
mt_seed_rng() { mt_rand_state=$((($1 * 2654435761 + 1) & 0xffffffff)); }
# Sets mt_r to a number in [0, N).
mt_rand() {
    mt_rand_state=$(((mt_rand_state * 1664525 + 1013904223) & 0xffffffff))
    mt_r=$(((mt_rand_state >> 8) % $1))
}
# Sets mt_pick to a random argument (none: returns 1).
mt_pick_of() {
    [ $# -gt 0 ] || return 1
    mt_rand $#
    local a=("$@")
    mt_pick=${a[$mt_r]}
}

declare -A mt_db_flags mt_db_off # source -> flags, for entries in the database and left out of it
mt_next_id=10

mt_write_header() { # PATH ID [WORD]: a shared header
    local w=${3:-gamma}
    cat >"$1" <<H
#pragma once
#include "common.h"
#include "cfg.h"
namespace h$2 {
#ifdef MODE_A
int mode_a_alpha(); // decl
#else
int mode_b_alpha(); // decl
#endif
int decl_alpha(int value); // decl
int decl_$w(int value); // decl
int fixed_alpha();
int fixed_gamma();
inline int body_fn() { return fixed_alpha() + CFG_VALUE; } // body
} // namespace h$2
#define H$2_CALL(x) h$2::decl_$w(x) // macro
H
}

mt_write_source() { # ID HEADER_ID...
    local id=$1 h g=$(($1 % 3))
    shift
    {
        echo '#define PICK_alpha 1 // define'
        echo '#include "common.h"'
        for h in "$@"; do echo "#include \"h$h.h\" // include"; done
        if [ $((id % 4)) = 3 ]; then
            echo '#include "plat/plat.h"'
        fi
        if [ $((id % 5)) = 4 ]; then
            echo "#include \"gen/g$g.h\""
        else
            echo "#if __has_include(\"gen/g$g.h\")"
            echo "#include \"gen/g$g.h\""
            echo '#endif'
        fi
        echo '#define LOCAL_CALL(x) own_alpha(x) // macro'
        echo "namespace s$id {"
        for h in "$@"; do echo "int use_h$h() { return H${h}_CALL(1) + h$h::body_fn(); } // body"; done
        echo 'int own_alpha(int v) { return v + COMMON_CALL(2); } // body'
        echo 'int use_local() { return LOCAL_CALL(3); } // body'
        echo "} // namespace s$id"
    } >"$mt_root/src/s$id.cpp"
}

mt_write_db() {
    local s first=1
    {
        echo '['
        for s in $(printf '%s\n' "${!mt_db_flags[@]}" | sort); do
            [ "$first" = 1 ] || echo ','
            first=0
            printf '  {"directory": "%s", "file": "%s", "arguments": ["c++", "-std=c++17"' "$mt_root" "$s"
            local f
            for f in ${mt_db_flags[$s]}; do printf ', "%s"' "$f"; done
            printf ', "-c", "%s"]}' "$s"
        done
        echo
        echo ']'
    } >"$mt_root/compile_commands.json.tmp"
    mv "$mt_root/compile_commands.json.tmp" "$mt_root/compile_commands.json"
}

mt_create() { # DIR
    mt_root=$1
    mkdir -p "$mt_root"/{include/gen,include/variants,include/plat_a,include/plat_b,include0,extra,src}
    cat >"$mt_root/include/common.h" <<'H'
#pragma once
#ifdef PICK_alpha
int picked_alpha(); // decl
#elif defined(PICK_gamma)
int picked_gamma(); // decl
#else
int picked_other(); // decl
#endif
#if LEVEL > 1
int level_high_alpha(); // decl
#elif LEVEL > 0
int level_low_alpha(); // decl
#endif
#define COMMON_CALL(x) ((x) + 1) // macro
H
    printf '#pragma once\n#define CFG_VALUE 1 // macro\nint cfg_alpha(); // decl\n' >"$mt_root/include/variants/cfg_a.h"
    printf '#pragma once\n#define CFG_VALUE 2 // macro\nint cfg_gamma(); // decl\n' >"$mt_root/include/variants/cfg_b.h"
    ln -s variants/cfg_a.h "$mt_root/include/cfg.h"
    printf '#pragma once\nint plat_a_alpha(); // decl\n' >"$mt_root/include/plat_a/plat.h"
    printf '#pragma once\nint plat_b_alpha(); // decl\n' >"$mt_root/include/plat_b/plat.h"
    ln -s plat_a "$mt_root/include/plat"
    local i
    for i in 1 2 3 4; do mt_write_header "$mt_root/include/h$i.h" "$i"; done
    mt_write_header "$mt_root/extra/h1.h" 1 kappa
    mt_write_source 1 1 2
    mt_write_source 2 2 3
    mt_write_source 3 1 3 4
    mt_write_source 4 4
    mt_write_source 5 1 2 4
    # Every TU reads a header under the same macros until flag-define or source-define make them
    # differ: which TU's view of a header the store keeps is then what those kinds test.
    local base="-Iinclude0 -Iinclude"
    mt_db_flags=([src/s1.cpp]="$base" [src/s2.cpp]="$base" [src/s3.cpp]="$base"
        [src/s4.cpp]="-Iextra $base" [src/s5.cpp]="$base")
    mt_write_db
}

# Listings (sorted, relative to the root).
mt_headers() { (cd "$mt_root" && compgen -G 'include/h*.h' | sort) || true; }
mt_sources() { (cd "$mt_root" && compgen -G 'src/s*.cpp' | sort) || true; }
mt_db_sources() { printf '%s\n' "${!mt_db_flags[@]}" | sort; }
mt_editable() { # MARKER: files holding a line that ends in it
    (cd "$mt_root" && grep -rlE -- "// $1\$" include include0 extra src 2>/dev/null | sort) || true
}
mt_id_of() { local b=${1##*/}; b=${b%.*}; echo "${b:1}"; }

# One word swap in a line with MARKER of FILE; SAME_SIZE=1 picks a word of equal length. In the
# bodies of a header's inline functions only alpha and gamma swap (fixed_alpha, fixed_gamma): an
# error there is the kind header-body-error's, not any edit's.
mt_swap_word() { # FILE MARKER SAME_SIZE
    local f=$mt_root/$1 lines words=() w old new candidates=() pool=("${mt_words[@]}")
    [ "$2" = body ] && [[ $1 == *.h ]] && pool=(alpha gamma)
    mapfile -t lines < <(grep -nE -- "// $2\$" "$f" | cut -d: -f1)
    mt_pick_of "${lines[@]}" || return 1
    local n=$mt_pick text
    text=$(sed -n "${n}p" "$f")
    for w in "${pool[@]}"; do [[ $text == *"$w"* ]] && words+=("$w"); done
    mt_pick_of "${words[@]}" || return 1
    old=$mt_pick
    for w in "${pool[@]}"; do
        [ "$w" != "$old" ] || continue
        [ "$3" = 1 ] && [ "${#w}" != "${#old}" ] && continue
        candidates+=("$w")
    done
    mt_pick_of "${candidates[@]}" || return 1
    new=$mt_pick
    sed -i "${n}s/$old/$new/" "$f"
    mt_desc="sed -i '${n}s/$old/$new/' $1"
}

mt_edit() { # MARKER KEEP_STAMP
    local files
    mapfile -t files < <(mt_editable "$1")
    mt_pick_of "${files[@]}" || return 1
    local file=$mt_pick same=$2
    if [ "$2" = 0 ]; then mt_rand 2 && same=$mt_r; fi
    if [ "$2" = 1 ]; then
        local ref=$mt_root/../stamp.ref
        touch -r "$mt_root/$file" "$ref"
        mt_swap_word "$file" "$1" 1 || return 1
        touch -r "$ref" "$mt_root/$file"
        mt_desc="$mt_desc; touch -d @<old mtime> $file (same size)"
    else
        mt_swap_word "$file" "$1" "$same" || return 1
    fi
}

mt_add_include() { # SOURCE HEADER_ID
    local f=$mt_root/$1
    if grep -q '// include$' "$f"; then
        sed -i "0,/\\/\\/ include\$/s//\\/\\/ include\\n#include \"h$2.h\" \\/\\/ include/" "$f"
    else
        sed -i "s/^#include \"common.h\"\$/&\\n#include \"h$2.h\" \\/\\/ include/" "$f"
    fi
    sed -i "s/^} \\/\\/ namespace s/int use_h$2() { return h$2::body_fn(); } \\/\\/ body\\n&/" "$f"
}

mt_toggle_flag() { # SOURCE FLAG [FRONT]
    local flags=" ${mt_db_flags[$1]} "
    if [[ $flags == *" $2 "* ]]; then
        flags=${flags/ $2 / }
    elif [ -n "${3:-}" ]; then
        flags=" $2$flags"
    else
        flags="$flags$2 "
    fi
    flags=${flags# }
    mt_db_flags[$1]=${flags% }
}

mt_applicable() { # KIND
    case $1 in
    remove-header | rename-header | shadow-header | header-body-error) [ -n "$(mt_headers)" ] ;;
    remove-source | rename-source | db-entry) [ -n "$(mt_sources)" ] ;;
    add-header | flag-define | flag-include | tu-fail) [ -n "$(mt_db_sources)" ] ;;
    *) true ;;
    esac
}

mt_mutate() { # KIND: sets mt_desc (and mt_then for a file or link moved away, to move it back)
    local kind=$1 list ids=() h s
    mt_desc="" mt_then=""
    case $kind in
    edit-body) mt_edit body 0 ;;
    edit-decl) mt_edit decl 0 ;;
    edit-macro) mt_edit macro 0 ;;
    source-define) mt_edit define 0 ;;
    edit-keep-stamp)
        mt_rand 3
        local markers=(body decl macro)
        mt_edit "${markers[$mt_r]}" 1
        ;;
    header-body-error)
        mapfile -t list < <(mt_headers)
        mt_pick_of "${list[@]}"
        h=$mt_pick
        if grep -q '// error$' "$mt_root/$h"; then
            sed -i '/\/\/ error$/d' "$mt_root/$h"
            mt_desc="delete the line broken_fn() { return undeclared_alpha; } from $h"
        else
            sed -i 's/^} \/\/ namespace h/inline int broken_fn() { return undeclared_alpha; } \/\/ error\n&/' "$mt_root/$h"
            mt_desc="add the line broken_fn() { return undeclared_alpha; } (an error in an inline body) to $h"
        fi
        ;;
    add-header)
        local id=$((mt_next_id++))
        mt_write_header "$mt_root/include/h$id.h" "$id"
        mapfile -t list < <(mt_db_sources)
        mt_pick_of "${list[@]}"
        mt_add_include "$mt_pick" "$id"
        mt_desc="create include/h$id.h; include it from $mt_pick"
        ;;
    remove-header)
        mapfile -t list < <(mt_headers)
        mt_pick_of "${list[@]}"
        h=$mt_pick
        rm "$mt_root/$h"
        mt_desc="rm $h"
        mt_rand 2
        if [ "$mt_r" = 1 ]; then
            local base=${h#include/} id
            id=$(mt_id_of "$h")
            for s in $(mt_sources); do
                sed -i "/^#include \"$base\"/d; /^int use_h$id() /d" "$mt_root/$s"
            done
            mt_desc="$mt_desc; delete its #include and use_h$id lines from src/*.cpp"
        fi
        ;;
    rename-header)
        mapfile -t list < <(mt_headers)
        mt_pick_of "${list[@]}"
        h=$mt_pick
        local to=include/h$((mt_next_id++)).h
        mv "$mt_root/$h" "$mt_root/$to"
        for s in $(mt_sources); do sed -i "s|^#include \"${h#include/}\"|#include \"${to#include/}\"|" "$mt_root/$s"; done
        mt_desc="mv $h $to; rewrite its #include lines in src/*.cpp"
        ;;
    add-source)
        local id=$((mt_next_id++)) n
        mapfile -t list < <(mt_headers)
        mt_rand 3
        for ((n = 0; n <= mt_r && ${#list[@]} > 0; ++n)); do
            mt_pick_of "${list[@]}"
            ids+=("$(mt_id_of "$mt_pick")")
        done
        mapfile -t ids < <(printf '%s\n' "${ids[@]}" | sort -un | grep . || true)
        mt_write_source "$id" "${ids[@]}"
        mt_db_flags[src/s$id.cpp]="-Iinclude0 -Iinclude"
        mt_write_db
        mt_desc="create src/s$id.cpp (including h${ids[*]:-}) and its database entry"
        ;;
    remove-source)
        mapfile -t list < <(mt_sources)
        mt_pick_of "${list[@]}"
        s=$mt_pick
        rm "$mt_root/$s"
        unset "mt_db_flags[$s]" "mt_db_off[$s]"
        mt_write_db
        mt_desc="rm $s; drop its database entry"
        ;;
    rename-source)
        mapfile -t list < <(mt_sources)
        mt_pick_of "${list[@]}"
        s=$mt_pick
        local to=src/s$((mt_next_id++)).cpp
        mv "$mt_root/$s" "$mt_root/$to"
        if [ -n "${mt_db_flags[$s]+x}" ]; then
            mt_db_flags[$to]=${mt_db_flags[$s]}
            unset "mt_db_flags[$s]"
        else
            mt_db_off[$to]=${mt_db_off[$s]}
            unset "mt_db_off[$s]"
        fi
        mt_write_db
        mt_desc="mv $s $to; rename its database entry"
        ;;
    generated-header)
        mt_rand 3
        local g=include/gen/g$mt_r.h
        if [ -e "$mt_root/$g" ]; then
            rm "$mt_root/$g"
            mt_desc="rm $g"
        else
            printf '#pragma once\nint gen_alpha_%d(); // decl\n#define GEN_%d 1 // macro\n' "$mt_r" "$mt_r" >"$mt_root/$g"
            mt_desc="create $g (included under __has_include, or plainly and missing until now)"
        fi
        ;;
    shadow-header)
        mapfile -t list < <(mt_headers)
        mt_pick_of "${list[@]}"
        h=${mt_pick#include/}
        mt_pick_of include0 src
        local shadow=$mt_pick/$h
        if [ -e "$mt_root/$shadow" ]; then
            rm "$mt_root/$shadow"
            mt_desc="rm $shadow (include/$h is found again)"
        else
            mt_write_header "$mt_root/$shadow" "$(mt_id_of "$h")" sigma
            mt_desc="create $shadow, shadowing include/$h"
        fi
        ;;
    retarget-symlink)
        mt_rand 3
        local link target
        if [ "$mt_r" = 2 ]; then
            # The link itself moves away (the TU re-parses with "file not found") and back.
            local away=$mt_root/../away
            mkdir -p "$away"
            mv "$mt_root/include/cfg.h" "$away/link"
            mt_desc="mv include/cfg.h (the symlink) away"
            mt_then="mv <away> include/cfg.h"
            mt_then_cmd=(mv "$away/link" "$mt_root/include/cfg.h")
            return 0
        elif [ "$mt_r" = 0 ]; then
            link=include/cfg.h
            target=$(readlink "$mt_root/$link" 2>/dev/null || echo variants/cfg_b.h)
            [ "$target" = variants/cfg_a.h ] && target=variants/cfg_b.h || target=variants/cfg_a.h
        else
            link=include/plat
            target=$(readlink "$mt_root/$link" 2>/dev/null || echo plat_b)
            [ "$target" = plat_a ] && target=plat_b || target=plat_a
        fi
        ln -sfn "$target" "$mt_root/$link.tmp"
        mv -T "$mt_root/$link.tmp" "$mt_root/$link"
        mt_desc="ln -sfn $target $link"
        ;;
    flag-define)
        mapfile -t list < <(mt_db_sources)
        mt_pick_of "${list[@]}"
        s=$mt_pick
        mt_pick_of -DMODE_A -DPICK_gamma -DLEVEL
        if [ "$mt_pick" = -DLEVEL ]; then
            local flags=" ${mt_db_flags[$s]} " level
            mt_rand 3
            level=$mt_r
            flags=${flags/ -DLEVEL=1 / }
            flags=${flags/ -DLEVEL=2 / }
            [ "$level" != 0 ] && flags="$flags-DLEVEL=$level "
            flags=${flags# }
            mt_db_flags[$s]=${flags% }
        else
            mt_toggle_flag "$s" "$mt_pick"
        fi
        mt_write_db
        mt_desc="flags of $s: ${mt_db_flags[$s]}"
        ;;
    tu-fail)
        # libclang refuses the command (the last -std wins): the TU fails, and what it extracted
        # must go as a clean index of the tree leaves it; then it parses again.
        mapfile -t list < <(mt_db_sources)
        mt_pick_of "${list[@]}"
        s=$mt_pick
        mt_toggle_flag "$s" -std=bogus
        mt_write_db
        mt_desc="flags of $s: ${mt_db_flags[$s]}"
        ;;
    flag-include)
        mapfile -t list < <(mt_db_sources)
        mt_pick_of "${list[@]}"
        s=$mt_pick
        mt_pick_of -Iextra -Iinclude0
        mt_toggle_flag "$s" "$mt_pick" front
        mt_write_db
        mt_desc="flags of $s: ${mt_db_flags[$s]}"
        ;;
    db-entry)
        mapfile -t list < <(mt_sources)
        mt_pick_of "${list[@]}"
        s=$mt_pick
        if [ -n "${mt_db_flags[$s]+x}" ]; then
            mt_db_off[$s]=${mt_db_flags[$s]}
            unset "mt_db_flags[$s]"
            mt_desc="drop the database entry of $s (the file stays)"
        else
            mt_db_flags[$s]=${mt_db_off[$s]:--Iinclude0 -Iinclude}
            unset "mt_db_off[$s]"
            mt_desc="add the database entry of $s back"
        fi
        mt_write_db
        ;;
    move-away-back)
        # Not the symlink include/cfg.h: moving it away and back is a retarget-symlink change.
        mapfile -t list < <(
            mt_headers
            mt_sources
            echo include/common.h
        )
        mt_pick_of "${list[@]}"
        local away=$mt_root/../away
        mkdir -p "$away"
        mv "$mt_root/$mt_pick" "$away/file"
        mt_desc="mv $mt_pick away"
        mt_then="mv <away> $mt_pick"
        mt_then_cmd=(mv "$away/file" "$mt_root/$mt_pick")
        ;;
    *)
        echo "tree_mutator: unknown kind '$kind'" >&2
        return 2
        ;;
    esac
}
