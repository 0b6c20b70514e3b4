#!/usr/bin/env bash
# Neovim's LSP client against `symdex lsp` on a copy of the golden fixture (tests/editor/
# nvim_lsp.lua says what it checks). Usage: nvim_lsp_test.sh SYMDEX_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
symdex=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/symdex-nvim-XXXXXX")
root=$work/tree
stop_daemon() {
  # The daemon `symdex lsp` started, by the pid in its lock file.
  local pid
  pid=$(head -n1 "$root/.symdex/daemon.lock" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$work"
}
trap stop_daemon EXIT

"$here/../fixtures/golden_tree.sh" "$root"

cd "$root"
PATH=$(dirname "$symdex"):$PATH SYMDEX_ROOT=$root SYMDEX_NVIM_CONFIG=$here/symdex.lua timeout 180 \
  nvim --headless -u NONE -i NONE -n -c "luafile $here/nvim_lsp.lua"
