#!/usr/bin/env bash
# The differential test (issue 18): an incremental index must always equal a clean index of the
# same tree. A seeded random mutator (tree_mutator.sh) applies the changes real work makes to a
# small C++ tree; after each change
# - cli mode: `symdex index` runs on a persistent store;
# - daemon mode: one symdexd, started once, serves the tree and must notice the change itself
#   (its watcher and re-index; never restarted, except to resynchronise after a mismatch);
# and `symdex dump` of that store must equal the dump of a fresh store indexed from scratch, byte
# for byte. A mismatch prints the seed, the step, the kind of change, what it did and the first
# differing dump lines; the store is then resynchronised from the clean one, so that each step is
# judged on its own. Ends with a summary: checks and mismatches per kind. Exits 1 on a mismatch.
#
# Usage: differential.sh SYMDEX SYMDEXD [--seeds N[,N...]] [--steps N] [--mode cli|daemon]
#                        [--kinds all|K[,K...]] [--skip K[,K...]] [--first] [--keep] [--verbose]
#   --first: stop at the first mismatch (to find a seed's failing step).
# The kinds are tree_mutator.sh's mt_all_kinds. $DIFF_DAEMON_LIMIT_S bounds the wait for the
# daemon to converge after a change (default 10 s).
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tree_mutator.sh
. "$here/tree_mutator.sh"

usage() {
    sed -n '/^# Usage:/,/^# The kinds/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
[ $# -ge 2 ] || usage
dt_symdex=$(realpath "$1")
dt_symdexd=$(realpath "$2")
shift 2
dt_seeds=1 dt_steps=50 dt_mode=cli dt_kinds=all dt_skip="" dt_keep="" dt_verbose="" dt_first=""
while [ $# -gt 0 ]; do
    case $1 in
    --seeds | --seed) dt_seeds=$2 && shift 2 ;;
    --steps) dt_steps=$2 && shift 2 ;;
    --mode) dt_mode=$2 && shift 2 ;;
    --kinds) dt_kinds=$2 && shift 2 ;;
    --skip) dt_skip=$2 && shift 2 ;;
    --keep) dt_keep=1 && shift ;;
    --first) dt_first=1 && shift ;;
    --verbose) dt_verbose=1 && shift ;;
    *) echo "differential: unknown option '$1'" >&2 && usage ;;
    esac
done
case $dt_mode in cli | daemon) ;; *) echo "differential: --mode must be cli or daemon, not '$dt_mode'" >&2 && exit 2 ;; esac
[[ $dt_steps =~ ^[0-9]+$ ]] || { echo "differential: --steps must be a number, not '$dt_steps'" >&2 && exit 2; }
dt_daemon_limit_s=${DIFF_DAEMON_LIMIT_S:-10}

# The kinds to run: --kinds minus --skip, each checked against the mutator's list.
dt_enabled=()
dt_valid_kind() {
    local k
    for k in "${mt_all_kinds[@]}"; do [ "$k" = "$1" ] && return 0; done
    echo "differential: unknown kind '$1'; the kinds: ${mt_all_kinds[*]}" >&2
    exit 2
}
IFS=, read -ra dt_skip_list <<<"$dt_skip"
for k in "${dt_skip_list[@]}"; do dt_valid_kind "$k"; done
if [ "$dt_kinds" = all ]; then dt_wanted=("${mt_all_kinds[@]}"); else IFS=, read -ra dt_wanted <<<"$dt_kinds"; fi
for k in "${dt_wanted[@]}"; do
    dt_valid_kind "$k"
    [[ ",$dt_skip," == *",$k,"* ]] || dt_enabled+=("$k")
done
[ ${#dt_enabled[@]} -gt 0 ] || { echo "differential: no kind left to run" >&2 && exit 2; }

dt_now_ms() { echo $(($(date +%s%N) / 1000000)); }

dt_index() { # STORE LOG [OPTION...]
    local store=$1 log=$2
    shift 2
    "$dt_symdex" index -p "$dt_tree/compile_commands.json" --store "$store" --threads 2 -q "$@" >"$log" 2>&1 || {
        echo "differential: symdex index --store $store failed (exit $?):" >&2
        tail -n 20 "$log" >&2
        return 1
    }
}

dt_dump() { # STORE OUT: paths relative to the tree
    (cd "$dt_tree" && "$dt_symdex" dump --store "$1") >"$2" 2>"$2.err" || {
        echo "differential: symdex dump --store $1 failed: $(head -c 300 "$2.err")" >&2
        return 1
    }
}

# The reference: a fresh store $dt_work/clean, dumped to $dt_work/clean.dump. Parsed in-process
# (--isolation none, a third of the time of a worker per TU: isolation does not change results)
# and on one thread, in rank order, so that it does not depend on timing.
dt_clean_dump() {
    rm -rf "$dt_work/clean"
    dt_index "$dt_work/clean" "$dt_work/clean-index.log" --isolation "${DIFF_CLEAN_ISOLATION:-none}" \
        --threads 1
    dt_dump "$dt_work/clean" "$dt_work/clean.dump"
}

# --- symdexd: started once per seed; asked symdex/status through `symdex lsp` (a stdio bridge
# to its socket) kept open as a coprocess.
dt_daemon_start() {
    dt_daemon_log=$dt_work/symdexd-$((++dt_daemon_starts)).log
    "$dt_symdexd" --root "$dt_tree" -p "$dt_tree/compile_commands.json" --store "$dt_work/store" \
        --threads 2 --index-priority normal --debounce 50 --socket "$dt_work/run/symdexd.sock" \
        2>"$dt_daemon_log" &
    dt_daemon_pid=$!
    local limit=$(($(dt_now_ms) + dt_daemon_limit_s * 1000 + 20000))
    until grep -q '^symdexd: run 1: ' "$dt_daemon_log"; do
        if ! kill -0 "$dt_daemon_pid" 2>/dev/null || [ "$(dt_now_ms)" -gt "$limit" ]; then
            echo "differential: symdexd did not end its start-up run; its log:" >&2
            tail -n 20 "$dt_daemon_log" >&2
            return 1
        fi
        sleep 0.02
    done
    coproc DT_RPC { exec "$dt_symdex" lsp --store "$dt_work/store" 2>>"$dt_work/lsp.log"; }
    dt_rpc_pid=$DT_RPC_PID
}

dt_daemon_stop() {
    if [ -n "${dt_rpc_pid:-}" ]; then
        kill "$dt_rpc_pid" 2>/dev/null || true
        wait "$dt_rpc_pid" 2>/dev/null || true
        dt_rpc_pid=""
    fi
    if [ -n "${dt_daemon_pid:-}" ]; then
        kill -TERM "$dt_daemon_pid" 2>/dev/null || true
        wait "$dt_daemon_pid" 2>/dev/null || true
        dt_daemon_pid=""
    fi
}

# Sets dt_state to "STATE pendingChanges runPending runs" from symdex/status.
dt_status() {
    local body="{\"jsonrpc\":\"2.0\",\"id\":$((++dt_rpc_id)),\"method\":\"symdex/status\"}" line len=0 reply
    # bash unsets DT_RPC when the coprocess ends: say so, with its log, rather than stop on
    # an unbound variable.
    if [ -z "${DT_RPC[1]:-}" ] || [ -z "${DT_RPC[0]:-}" ]; then
        echo "differential: symdex lsp (the status bridge) has exited; its log:" >&2
        tail -n 20 "$dt_work/lsp.log" >&2 || true
        return 1
    fi
    printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body" >&"${DT_RPC[1]}" || return 1
    while IFS= read -r -t 10 line <&"${DT_RPC[0]}"; do
        line=${line%$'\r'}
        [ -z "$line" ] && break
        [[ $line =~ ^[Cc]ontent-[Ll]ength:\ *([0-9]+) ]] && len=${BASH_REMATCH[1]}
    done
    [ "$len" -gt 0 ] || return 1
    IFS= read -r -t 10 -N "$len" reply <&"${DT_RPC[0]}" || return 1
    local state=? pending=? run_pending=? runs=?
    [[ $reply =~ \"state\":\ *\"([a-z]+)\" ]] && state=${BASH_REMATCH[1]}
    [[ $reply =~ \"pendingChanges\":\ *([0-9]+) ]] && pending=${BASH_REMATCH[1]}
    [[ $reply =~ \"runPending\":\ *(true|false) ]] && run_pending=${BASH_REMATCH[1]}
    [[ $reply =~ \"runs\":\ *([0-9]+) ]] && runs=${BASH_REMATCH[1]}
    dt_state="$state $pending $run_pending $runs"
}

# Whether the compile database names no source that exists: then `symdex index` keeps the store
# unless told --prune-empty, and symdexd keeps serving what it has (issue 18).
dt_db_lists_nothing() {
    python3 -c '
import json, os, sys
try:
    entries = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    entries = []
paths = [os.path.join(e.get("directory", ""), e.get("file", "")) for e in entries]
sys.exit(1 if any(os.path.isfile(p) for p in paths) else 0)
' "$dt_tree/compile_commands.json"
}

# Waits (bounded) until the daemon is idle with nothing queued and its store dumps as EXPECTED
# does; gives up once it stayed idle for 2 s with a different dump, or after the limit.
dt_daemon_converge() { # CHANGED_AT_MS EXPECTED
    local start=$1 expected=$2 now idle_since=""
    # The watcher's event and the 50 ms debounce: at least 300 ms after the change (the clean
    # index ran meanwhile).
    now=$(dt_now_ms)
    [ $((now - start)) -ge 300 ] || sleep "0.$(printf '%03d' $((300 - (now - start))))"
    while :; do
        now=$(dt_now_ms)
        if ! dt_status; then
            echo "differential: symdex/status got no answer; symdexd's log:" >&2
            tail -n 20 "$dt_daemon_log" >&2
            return 2
        fi
        if [ "$dt_state" = "idle 0 false ${dt_state##* }" ]; then
            dt_dump "$dt_work/store" "$dt_work/store.dump" || return 2
            cmp -s "$dt_work/store.dump" "$expected" && return 0
            [ -n "$idle_since" ] || idle_since=$now
            [ $((now - idle_since)) -ge 2000 ] && return 1
        else
            idle_since=""
        fi
        [ $((now - start)) -ge $((dt_daemon_limit_s * 1000)) ] && return 1
        sleep 0.1
    done
}

# --- one check: the store after the change against a clean index of the tree as it is now.
declare -A dt_checks dt_mismatches
dt_check() { # KIND LABEL DESCRIPTION
    local kind=$1 verdict=0 t0
    t0=$(dt_now_ms)
    dt_checks[$kind]=$((${dt_checks[$kind]:-0} + 1))
    dt_total_checks=$((dt_total_checks + 1))
    dt_clean_dump
    # A database that names no existing source: the CLI drops the store only when asked
    # (--prune-empty, and then it must equal the empty clean index); symdexd keeps what it served.
    local expected=$dt_work/clean.dump prune=()
    if dt_db_lists_nothing; then
        prune=(--prune-empty)
        [ "$dt_mode" = daemon ] && expected=$dt_work/expected-before.dump
    fi
    if [ "$dt_mode" = cli ]; then
        dt_index "$dt_work/store" "$dt_work/index.log" "${prune[@]}" &&
            dt_dump "$dt_work/store" "$dt_work/store.dump" &&
            cmp -s "$dt_work/store.dump" "$expected" || verdict=1
    else
        dt_daemon_converge "$t0" "$expected" || verdict=$?
        [ "$verdict" = 2 ] && exit 1
    fi
    cp "$expected" "$dt_work/expected-next.dump"
    mv "$dt_work/expected-next.dump" "$dt_work/expected-before.dump"
    [ -n "$dt_verbose" ] && printf 'seed %s step %d %-17s %-7s %5d ms  %s\n' "$dt_seed" "$dt_step" \
        "$2" "$([ "$verdict" = 0 ] && echo equal || echo DIFFERS)" $(($(dt_now_ms) - t0)) "$3"
    [ "$verdict" = 0 ] && return 0
    dt_mismatches[$kind]=$((${dt_mismatches[$kind]:-0} + 1))
    dt_total_mismatches=$((dt_total_mismatches + 1))
    echo "MISMATCH: seed $dt_seed step $dt_step kind $2 ($dt_mode): $3"
    echo "  replay: $0 SYMDEX SYMDEXD --seeds $dt_seed --steps $dt_step --mode $dt_mode --kinds $(
        IFS=,
        echo "${dt_enabled[*]}"
    ) --verbose --keep"
    echo "  first differing dump lines (- expected, + $dt_mode store):"
    diff -U1 --label expected "$dt_work/expected-before.dump" --label "$dt_mode" "$dt_work/store.dump" |
        tail -n +3 | head -n "${DIFF_LINES:-16}" | sed 's/^/    /' || true
    # Resynchronise: later steps are judged on their own.
    if [ "$dt_mode" = daemon ]; then
        echo "  (daemon log: $dt_daemon_log; restarting symdexd on a copy of the clean store)"
        dt_daemon_stop
        rm -rf "$dt_work/store"
        cp -a "$dt_work/clean" "$dt_work/store"
        cp "$dt_work/clean.dump" "$dt_work/expected-before.dump"
        dt_daemon_start
    else
        rm -rf "$dt_work/store"
        cp -a "$dt_work/clean" "$dt_work/store"
        cp "$dt_work/clean.dump" "$dt_work/expected-before.dump"
    fi
}

dt_cleanup() {
    dt_daemon_stop
    if [ -n "${dt_work:-}" ]; then
        if [ -n "$dt_keep" ]; then echo "differential: kept $dt_work"; else rm -rf "$dt_work"; fi
    fi
}
trap dt_cleanup EXIT

dt_run_seed() { # SEED
    dt_seed=$1 dt_step=0 dt_rpc_id=0 dt_daemon_starts=0
    dt_work=$(mktemp -d "${TMPDIR:-/tmp}/symdex-differential-XXXXXX")
    mkdir -p "$dt_work/run" && chmod 700 "$dt_work/run"
    dt_tree=$dt_work/tree
    mt_seed_rng "$dt_seed"
    mt_next_id=10
    mt_db_flags=() mt_db_off=()
    mt_create "$dt_tree"
    : >"$dt_work/trace.txt"
    if [ "$dt_mode" = cli ]; then dt_index "$dt_work/store" "$dt_work/index.log"; else dt_daemon_start; fi
    dt_dump "$dt_work/store" "$dt_work/expected-before.dump"
    local kind tries
    for ((dt_step = 1; dt_step <= dt_steps; ++dt_step)); do
        for ((tries = 0; tries < 50; ++tries)); do
            mt_rand ${#dt_enabled[@]}
            kind=${dt_enabled[$mt_r]}
            mt_applicable "$kind" && mt_mutate "$kind" && break
            kind=""
        done
        [ -n "$kind" ] || { echo "differential: no enabled kind applies to the tree at step $dt_step" >&2 && exit 1; }
        echo "step $dt_step $kind: $mt_desc" >>"$dt_work/trace.txt"
        dt_check "$kind" "$kind" "$mt_desc"
        if [ -n "$mt_then" ]; then
            "${mt_then_cmd[@]}"
            echo "step $dt_step $kind: $mt_then" >>"$dt_work/trace.txt"
            dt_check "$kind" "$kind/back" "$mt_then"
        fi
        [ -n "$dt_first" ] && [ "$dt_total_mismatches" -gt 0 ] && break
    done
    [ -n "$dt_keep" ] && echo "differential: seed $dt_seed: the changes are in $dt_work/trace.txt"
    dt_daemon_stop
    [ -n "$dt_keep" ] || rm -rf "$dt_work"
    dt_work=""
}

dt_total_checks=0 dt_total_mismatches=0
dt_start=$(dt_now_ms)
IFS=, read -ra dt_seed_list <<<"$dt_seeds"
for s in "${dt_seed_list[@]}"; do
    dt_run_seed "$s"
    [ -n "$dt_first" ] && [ "$dt_total_mismatches" -gt 0 ] && break
done
echo "differential ($dt_mode): seeds $dt_seeds, $dt_steps steps each, $dt_total_checks checks," \
    "$dt_total_mismatches mismatches ($(($(dt_now_ms) - dt_start)) ms); per kind (mismatches/checks):"
for k in "${dt_enabled[@]}"; do
    printf '  %-17s %d/%d\n' "$k" "${dt_mismatches[$k]:-0}" "${dt_checks[$k]:-0}"
done
[ "$dt_total_mismatches" = 0 ]
