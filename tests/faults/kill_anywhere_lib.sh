# Kill anywhere, lose nothing: the engine shared by tests/faults/kill_anywhere.sh (a generated
# tree) and bench/kill_anywhere.sh (LevelDB). Sourced, not run. The caller first sources a tree
# adapter defining tree_create DIR, tree_apply SCENARIO (cold|header|macro|remove|add; each call
# edits the tree once more), tree_state (a name for the tree's contents), and setting tree_root
# and tree_db (the compile database); then calls ka_main SYMDEX SYMDEXD KILLS.
#
# Each kill: edit the tree as the scenario says (cold: delete the store), start an indexer on the
# store and kill it at a fraction of that scenario's uninterrupted run time (measured first;
# fractions 5%..95%, spread over the scenarios), recover, and compare `symdex dump` of the store
# with `symdex dump` of a clean index (a fresh store) of the same tree, byte for byte. Kinds of
# kill, in turn: `symdex index` SIGKILLed (recovered by `symdex index`), symdexd SIGKILLed and
# symdexd SIGTERMed (each recovered alternately by a restarted symdexd, stopped with SIGTERM once
# its start-up run has ended, and by `symdex index`).

# KA_SCENARIOS picks a subset (in this order: remove must come before add).
read -ra ka_scenarios <<<"${KA_SCENARIOS:-cold header macro remove add}"
ka_kinds=(index-kill daemon-kill daemon-term)

ka_now_ms() { echo $(($(date +%s%N) / 1000000)); }

ka_index() { # STORE LOG: symdex index to completion
    "$ka_symdex" index -p "$tree_db" --store "$1" --threads 2 -q >"$2" 2>&1 || {
        echo "kill_anywhere: symdex index --store $1 failed (exit $?):" >&2
        tail -n 20 "$2" >&2
        return 1
    }
}

ka_dump() { # STORE OUT: paths relative to the tree, as for every dump compared here
    (cd "$tree_root" && "$ka_symdex" dump --store "$1") >"$2" || {
        echo "kill_anywhere: symdex dump --store $1 failed" >&2
        return 1
    }
}

# The dump of a clean index of the tree as it is now (cached by tree_state).
ka_clean_dump() {
    local out=$ka_work/clean/$(tree_state).dump
    if [ ! -f "$out" ]; then
        rm -rf "$ka_work/clean-store"
        ka_index "$ka_work/clean-store" "$ka_work/clean-index.log" || return 1
        ka_dump "$ka_work/clean-store" "$out.tmp" || return 1
        mv "$out.tmp" "$out"
        rm -rf "$ka_work/clean-store"
    fi
    echo "$out"
}

ka_daemon_start() { # LOG: sets ka_daemon_pid
    "$ka_symdexd" --root "$tree_root" -p "$tree_db" --store "$ka_store" --threads 2 \
        --index-priority normal --socket "$ka_work/run/symdexd.sock" 2>"$1" &
    ka_daemon_pid=$!
}

ka_daemon_run_ended() { grep -q '^symdexd: run 1: ' "$1"; }

# Waits until the daemon's start-up run ended (its log says "symdexd: run 1: ...").
ka_daemon_wait_run() { # LOG
    local limit=$(($(ka_now_ms) + ka_daemon_limit_s * 1000))
    until ka_daemon_run_ended "$1"; do
        if ! kill -0 "$ka_daemon_pid" 2>/dev/null; then
            echo "kill_anywhere: symdexd exited before its run ended; its log:" >&2
            tail -n 20 "$1" >&2
            return 1
        fi
        if [ "$(ka_now_ms)" -gt "$limit" ]; then
            echo "kill_anywhere: symdexd's run did not end in ${ka_daemon_limit_s} s; its log:" >&2
            tail -n 20 "$1" >&2
            return 1
        fi
        sleep 0.02
    done
    if grep -q '^symdexd: run 1: parsed' "$1"; then return 0; fi
    echo "kill_anywhere: symdexd's run failed:" >&2
    grep '^symdexd: run 1: ' "$1" >&2
    return 1
}

# SIGTERM and wait: the daemon must exit with status 0 (docs/protocol.md). One that had not
# started serving yet may die of the signal (143) before it handles it: counted, not failed.
ka_daemon_stop() { # LOG
    local status=0
    kill -TERM "$ka_daemon_pid"
    wait "$ka_daemon_pid" || status=$?
    if [ "$status" = 143 ] && ! grep -q '^symdexd: pid .* serving' "$1"; then
        ka_term_in_startup=$((ka_term_in_startup + 1))
    elif [ "$status" != 0 ]; then
        echo "kill_anywhere: symdexd exited with status $status after SIGTERM; its log:" >&2
        tail -n 20 "$1" >&2
        return 1
    fi
}

ka_daemon_index() { # LOG: restart the daemon, let its run end, stop it
    ka_daemon_start "$1"
    ka_daemon_wait_run "$1"
    ka_daemon_stop "$1"
}

# Uninterrupted run times (ms) per scenario, for `symdex index` and for symdexd (start to the end
# of its run); each measured run must also leave a store equal to a clean index.
declare -A ka_ms_index ka_ms_daemon
ka_measure() {
    local s t0 clean
    for s in "${ka_scenarios[@]}"; do
        tree_apply "$s"
        [ "$s" = cold ] && rm -rf "$ka_store"
        t0=$(ka_now_ms)
        ka_index "$ka_store" "$ka_work/measure.log"
        ka_ms_index[$s]=$(($(ka_now_ms) - t0))
        ka_dump "$ka_store" "$ka_work/store.dump"
        clean=$(ka_clean_dump)
        if ! cmp -s "$ka_work/store.dump" "$clean"; then
            echo "kill_anywhere: an uninterrupted '$s' run of symdex index already differs from a clean index:"
            diff -u "$clean" "$ka_work/store.dump" | head -n 20 || true
            ka_uninterrupted_bad=$((ka_uninterrupted_bad + 1))
            rm -rf "$ka_store" && ka_index "$ka_store" "$ka_work/measure.log"
        fi
    done
    for s in "${ka_scenarios[@]}"; do
        tree_apply "$s"
        [ "$s" = cold ] && rm -rf "$ka_store"
        t0=$(ka_now_ms)
        ka_daemon_start "$ka_work/measure.log"
        ka_daemon_wait_run "$ka_work/measure.log"
        ka_ms_daemon[$s]=$(($(ka_now_ms) - t0))
        ka_daemon_stop "$ka_work/measure.log"
        ka_dump "$ka_store" "$ka_work/store.dump"
        clean=$(ka_clean_dump)
        if ! cmp -s "$ka_work/store.dump" "$clean"; then
            echo "kill_anywhere: an uninterrupted '$s' run of symdexd already differs from a clean index:"
            diff -u "$clean" "$ka_work/store.dump" | head -n 20 || true
            ka_uninterrupted_bad=$((ka_uninterrupted_bad + 1))
            rm -rf "$ka_store" && ka_index "$ka_store" "$ka_work/measure.log"
        fi
    done
    echo "kill_anywhere: uninterrupted runs (ms), symdex index:$(for s in "${ka_scenarios[@]}"; do printf ' %s %s' "$s" "${ka_ms_index[$s]}"; done)"
    echo "kill_anywhere: uninterrupted runs (ms), symdexd:$(for s in "${ka_scenarios[@]}"; do printf ' %s %s' "$s" "${ka_ms_daemon[$s]}"; done)"
}

# A stride coprime to KILLS, so that kill i's fraction (i * stride mod KILLS) visits every
# fraction once and each scenario (i mod the number of scenarios) gets fractions from the whole range.
ka_stride() {
    local k=$1 s
    for s in 7 11 13 17 19 23 29 31; do
        local a=$s b=$k
        while [ "$b" != 0 ]; do local t=$((a % b)); a=$b; b=$t; done
        [ "$a" = 1 ] && [ "$s" -lt "$k" ] && echo "$s" && return
    done
    echo 1
}

# One kill: KILL_NUMBER. Prints one line; returns 1 when the dump differs. A run found already
# ended at its kill was shorter than measured (a loaded machine makes single measurements long):
# its scenario's estimate drops to that moment, so that the next kills land within the run.
ka_kill_once() {
    local i=$1 s=${ka_scenarios[$(($1 % ${#ka_scenarios[@]}))]} kind=${ka_kinds[$(($1 % 3))]}
    local permille=$((50 + 900 * ((i * ka_stride_value) % ka_kills) / (ka_kills > 1 ? ka_kills - 1 : 1)))
    local recovery moment delay_ms pid log=$ka_work/kill-$i.log
    tree_apply "$s"
    [ "$s" = cold ] && rm -rf "$ka_store"
    if [ "$kind" = index-kill ]; then
        delay_ms=$((ka_ms_index[$s] * permille / 1000))
        "$ka_symdex" index -p "$tree_db" --store "$ka_store" --threads 2 -q >"$log" 2>&1 &
        pid=$!
        sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
        if kill -KILL "$pid" 2>/dev/null; then
            moment="during the run"
        else
            moment="after it ended"
            ka_ms_index[$s]=$delay_ms
        fi
        wait "$pid" 2>/dev/null || true
        recovery="symdex index"
    else
        delay_ms=$((ka_ms_daemon[$s] * permille / 1000))
        ka_daemon_start "$log"
        sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
        if ka_daemon_run_ended "$log"; then
            moment="after its run ended"
            ka_ms_daemon[$s]=$delay_ms
        else
            moment="during the run"
        fi
        if [ "$kind" = daemon-kill ]; then
            kill -KILL "$ka_daemon_pid"
            wait "$ka_daemon_pid" 2>/dev/null || true
        else
            ka_daemon_stop "$log" || return 1
        fi
        if [ $(((i / 3) % 2)) = 0 ]; then recovery="symdexd restart"; else recovery="symdex index"; fi
    fi
    if [ "$recovery" = "symdex index" ]; then
        ka_index "$ka_store" "$ka_work/recover.log" || return 1
    else
        ka_daemon_index "$ka_work/recover.log" || return 1
    fi
    ka_dump "$ka_store" "$ka_work/store.dump" || return 1
    local clean verdict=equal
    clean=$(ka_clean_dump) || return 1
    cmp -s "$ka_work/store.dump" "$clean" || verdict=DIFFERS
    printf 'kill %2d/%d: %-6s %-11s at %2d.%d%% (%d ms, %s), recovered by %s: %s\n' "$((i + 1))" \
        "$ka_kills" "$s" "$kind" $((permille / 10)) $((permille % 10)) "$delay_ms" "$moment" \
        "$recovery" "$verdict"
    ka_count[$s/$kind]=$((${ka_count[$s/$kind]:-0} + 1))
    [ "$moment" = "during the run" ] && ka_during=$((ka_during + 1))
    if [ "$verdict" = DIFFERS ]; then
        diff -u --label clean "$clean" --label "after the kill" "$ka_work/store.dump" | head -n 30 || true
        # Start the next kill from a correct store, so that each kill is judged on its own.
        rm -rf "$ka_store"
        ka_index "$ka_store" "$ka_work/recover.log"
        return 1
    fi
    ka_equal[$s/$kind]=$((${ka_equal[$s/$kind]:-0} + 1))
}

ka_cleanup() {
    if [ -n "${ka_daemon_pid:-}" ] && kill -0 "$ka_daemon_pid" 2>/dev/null; then
        kill -KILL "$ka_daemon_pid" 2>/dev/null || true
    fi
    [ -n "${ka_keep:-}" ] || rm -rf "$ka_work"
}

ka_main() { # SYMDEX SYMDEXD KILLS
    ka_symdex=$(realpath "$1")
    ka_symdexd=$(realpath "$2")
    ka_kills=$3
    ka_daemon_limit_s=${KA_DAEMON_LIMIT_S:-600}
    ka_work=$(mktemp -d "${TMPDIR:-/tmp}/symdex-kill-XXXXXX")
    ka_store=$ka_work/store
    ka_keep=${KA_KEEP:-}
    trap ka_cleanup EXIT
    mkdir -p "$ka_work/clean" "$ka_work/run"
    chmod 700 "$ka_work/run"
    local start
    start=$(ka_now_ms)
    tree_create "$ka_work/tree"
    ka_uninterrupted_bad=0
    ka_term_in_startup=0
    ka_measure
    ka_stride_value=$(ka_stride "$ka_kills")
    declare -gA ka_count ka_equal
    ka_during=0
    local i equal=0 s k
    for ((i = 0; i < ka_kills; ++i)); do
        if ka_kill_once "$i"; then equal=$((equal + 1)); fi
    done
    echo "kill_anywhere: per scenario and kind (equal/kills):"
    for s in "${ka_scenarios[@]}"; do
        printf '  %-6s' "$s"
        for k in "${ka_kinds[@]}"; do printf '  %s %d/%d' "$k" "${ka_equal[$s/$k]:-0}" "${ka_count[$s/$k]:-0}"; done
        echo
    done
    echo "kill_anywhere: $ka_during of $ka_kills kills landed during an index run;" \
        "$ka_term_in_startup symdexd died of SIGTERM in its start-up, before serving;" \
        "$ka_uninterrupted_bad uninterrupted runs differed from a clean index"
    echo "kill_anywhere: $ka_kills kills, $equal dumps equal a clean index ($(($(ka_now_ms) - start)) ms)"
    [ "$equal" = "$ka_kills" ] && [ "$ka_uninterrupted_bad" = 0 ]
}
