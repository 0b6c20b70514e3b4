#!/usr/bin/env bash
# Installs what symdex needs from Debian 12 packages. Idempotent: does nothing when everything is
# already installed. Uses sudo only when not root.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config libstdc++-12-dev
  qt6-base-dev        # Qt 6 Core: JSON, command line, the daemon's event loop; Gui: bench chart
  qt6-svg-dev         # the bench chart as SVG (QSvgGenerator)
  fonts-dejavu-core   # text in the bench chart's PNG (the offscreen platform needs a font)
  libclang-16-dev     # the pinned libclang (see docs/design.md: why libclang 16)
  clang-16 libclang-rt-16-dev libfuzzer-16-dev   # scripts/fuzz.sh: libFuzzer, ASan, UBSan
  liblmdb-dev         # the symbol store
  lmdb-utils          # bench/store_tables.py: mdb_stat, mdb_dump
  libzstd-dev         # the store's declaration blocks (store/symbol_blocks.h)
  libtbb-dev          # the task arena
  catch2              # tests (v2)
  clang-format
  python3             # build: bash completion and man pages from --help; tests' helpers
  man-db              # the install test renders the man pages (man --warnings)
  dpkg-dev            # cpack -G DEB: dpkg-shlibdeps computes the package's dependencies
  systemd             # systemd-analyze verify checks the user service's units
  neovim              # the editor test: Neovim 0.7's LSP client against `symdex lsp`
  slurmctld slurmd slurm-client munge   # the Slurm test: a single-node cluster on localhost
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "installing: ${missing[*]}" >&2
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
  --no-install-recommends "${missing[@]}" >/dev/null
