#!/usr/bin/env bash
# The Debian package (issue 15): `cpack -G DEB` in the build directory, then, as root (or with
# password-less sudo), `dpkg -i` on this machine: its dependencies as dpkg-shlibdeps computed
# them, the programs on PATH, the man pages and the completion where Debian looks, the systemd
# user unit verified (systemd-analyze) and its ExecStart run as the manager would, the Neovim
# test against /usr/bin/symdex; then `dpkg -r`, which must leave none of the package's files.
# Exits 77 (skipped) without root, or when a symdex package is installed already (it is not
# this test's to replace). Usage: deb_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/symdex-deb-XXXXXX")
fail() { echo "FAIL: $*" >&2; exit 1; }
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || { echo "skipped: dpkg -i needs root or password-less sudo"; exit 77; }
  sudo=(sudo -n)
fi
if dpkg-query -W -f='${Status}' symdex 2>/dev/null | grep -q "ok installed"; then
  echo "skipped: a symdex package is installed already"
  exit 77
fi
installed=0
daemon=""
cleanup() {
  if [ -n "$daemon" ]; then kill -TERM "$daemon" 2>/dev/null || true; fi
  if [ "$installed" = 1 ]; then "${sudo[@]}" dpkg -r symdex >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$work/pkg" >/dev/null 2>&1)
deb=$(ls "$work"/pkg/symdex_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
# (Not liblmdb0: LMDB is linked from Debian's static archive, store/CMakeLists.txt.)
for lib in libclang1-16 libtbb12 libqt6core6; do
  grep -q "$lib" <<<"$depends" || fail "the package does not depend on $lib: $depends"
done
echo "ok: $(basename "$deb"), Depends: $depends"

"${sudo[@]}" dpkg -i "$deb" >/dev/null
installed=1
for program in symdex symdex-index symdex-worker symdexd symdex-bench; do
  [ "$(command -v "$program")" = "/usr/bin/$program" ] || fail "$program is not /usr/bin/$program"
done
man -w symdex >/dev/null && man -w 8 symdexd >/dev/null || fail "man does not find the pages"
[ -f /usr/share/bash-completion/completions/symdex ] || fail "no completion"
unit=/usr/lib/systemd/user/symdexd@.service
[ -f "$unit" ] || fail "no user unit at $unit"
echo "ok: installed; $(symdex --version)"

# The unit: verified for an instance (a project root), and its command run as systemd would.
root=$work/project
"$here/../fixtures/golden_tree.sh" "$root" src/main.cpp src/util.cpp
instance="symdexd@$(systemd-escape --path "$root").service"
mkdir -p "$work/units"
cp "$unit" "$work/units/symdexd@.service"
ln -s "symdexd@.service" "$work/units/$instance"
systemd-analyze verify --man=no "$work/units/$instance" || fail "systemd-analyze verify $instance"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
command_line=${exec_start//%f/$root}
# systemd resolves a bare name in its fixed search path: /usr/bin here.
read -r -a argv <<<"$command_line"
argv[0]=$(command -v "${argv[0]}")
mkdir -p "$work/run" && chmod 700 "$work/run"
XDG_RUNTIME_DIR=$work/run "${argv[@]}" >/dev/null 2>"$work/daemon.log" &
daemon=$!
answer=""
for _ in $(seq 300); do # until it has indexed: the answer comes through the daemon
  answer=$(XDG_RUNTIME_DIR=$work/run symdex def geo::Circle::area --store "$root/.symdex" \
    --daemon always 2>/dev/null || true)
  grep -q "include/shapes.h:29:10: method geo::Circle::area" <<<"$answer" && break
  sleep 0.1
done
grep -q "include/shapes.h:29:10" <<<"$answer" ||
  fail "the unit's daemon does not answer: $answer $(cat "$work/daemon.log")"
kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
daemon=""
[ "$status" = 0 ] || fail "the daemon exited $status on the unit's KillSignal (SIGTERM)"
echo "ok: $instance verifies; its ExecStart serves the project and stops cleanly on SIGTERM"

"$here/../editor/nvim_lsp_test.sh" /usr/bin/symdex

files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print substr($6, 2) }')
"${sudo[@]}" dpkg -r symdex >/dev/null
installed=0
for file in $files; do
  [ ! -e "$file" ] || fail "dpkg -r left $file"
done
if dpkg-query -W -f='${Status}' symdex 2>/dev/null | grep -q "ok installed"; then
  fail "symdex is still installed"
fi
echo "ok: dpkg -r removed all $(echo "$files" | wc -w) files"
