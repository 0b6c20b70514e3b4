#!/usr/bin/env bash
# `cmake --install` (issue 15): installs the build into a scratch prefix and requires the
# installed programs to work from there: --version, bash completion (commands and each
# command's options, generated from --help), man pages that render without warnings, and the
# Neovim editor test against the installed symdex (whose `symdex lsp` starts the symdexd beside
# it). Usage: install_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "$1")
prefix=$(mktemp -d "${TMPDIR:-/tmp}/symdex-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for program in symdex symdex-index symdex-worker symdexd symdex-bench; do
  [ -x "$prefix/bin/$program" ] || fail "$program was not installed into $prefix/bin"
done
version=$("$prefix/bin/symdex" --version)
grep -Eq '^symdex [0-9]+\.[0-9]+\.[0-9]+ \(libclang [0-9]+\.[0-9]+\.[0-9]+\)$' <<<"$version" ||
  fail "symdex --version: $version"
version=$("$prefix/bin/symdexd" --version)
grep -Eq '^symdexd [0-9.]+ \(libclang [0-9.]+: .*clang version' <<<"$version" ||
  fail "symdexd --version: $version"
echo "ok: installed; $("$prefix/bin/symdex" --version); $("$prefix/bin/symdexd" --version)"

# Bash completion: what Tab offers.
completion=$prefix/share/bash-completion/completions/symdex
[ -f "$completion" ] || fail "no bash completion installed"
complete_words() { # the words Tab completes for the command line "$@" (the last word: the prefix)
  (
    # shellcheck disable=SC1090
    source "$completion"
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _symdex
    printf '%s\n' "${COMPREPLY[@]}"
  )
}
commands=$("$prefix/bin/symdex" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/commands:/ { print $1 }')
for command in $commands; do
  # Not `complete_words | grep -q`: grep's early exit can kill the writer with SIGPIPE, and
  # pipefail then fails the check (the likely cause of one failure in 1.5 s in a full ctest run).
  words=$(complete_words symdex "${command:0:3}")
  grep -qx "$command" <<<"$words" || fail "Tab does not complete the command $command"
  # Every option the command's --help lists, and no other.
  expected=$("$prefix/bin/symdex" "$command" --help | grep -oE '^  (-[A-Za-z], )?--[a-z-]+' |
    grep -oE -- '--[a-z-]+' | sort)
  offered=$(complete_words symdex "$command" -- | grep -- '^--' | sort)
  [ "$expected" = "$offered" ] || fail "Tab offers other options for $command: $(diff <(echo "$expected") <(echo "$offered") | tr '\n' ' ')"
done
[ "$(complete_words symdex index --sha)" = "--shard" ] || fail "symdex index --sha<Tab>"
mkdir -p "$prefix/completion-dir/sub"
(cd "$prefix/completion-dir" && [ "$(complete_words symdex find --store s)" = "sub" ]) ||
  fail "symdex find --store <Tab> does not offer directories"
echo "ok: bash completion offers $(echo "$commands" | wc -w) commands and each one's options"

# Man pages: render without warnings, and document every command and option.
# Installed compressed, as Debian's policy asks.
for page in man1/symdex.1.gz man8/symdexd.8.gz; do
  [ -f "$prefix/share/man/$page" ] || fail "no $page installed"
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l "$prefix/share/man/$page" 2>&1 >/dev/null || true)
  [ -z "$warnings" ] || fail "$page renders with warnings: $warnings"
done
rendered=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$prefix/share/man/man1/symdex.1.gz" 2>/dev/null)
for command in $commands; do
  grep -q "symdex $command" <<<"$rendered" || fail "symdex(1) lacks the command $command"
done
for option in --shard --balance-from --slowest --read-only; do
  grep -q -- "$option" <<<"$rendered$(LC_ALL=C.UTF-8 man -l "$prefix/share/man/man8/symdexd.8.gz" 2>/dev/null)" ||
    fail "the man pages lack $option"
done
echo "ok: symdex(1) and symdexd(8) render without warnings and document every command"

# The editor test, with the installed symdex first on PATH.
"$here/../editor/nvim_lsp_test.sh" "$prefix/bin/symdex"
