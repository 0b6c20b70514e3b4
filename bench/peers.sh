#!/usr/bin/env bash
# Installs the peers `symdex bench --peers floor,ccls,clangd` times beside symdex, from Debian
# packages: clang-16 (the parse-only floor, the libclang version symdex pins), ccls, and
# clangd-16 (its background index, driven over LSP), and clangd-19, whose names
# bench/name_agreement compares symdex's with. Bench-only: the build and tests need none of
# them, so scripts/install-deps.sh does not install them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT_NAME=peers.sh
# shellcheck source=../scripts/lib/debian.sh
. "$root/scripts/lib/debian.sh"
need_cmds clang++-16:clang-16 ccls:ccls clangd-16:clangd-16 clangd-19:clangd-19
