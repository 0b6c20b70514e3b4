#!/usr/bin/env bash
# Builds libtbb with ThreadSanitizer from Debian's own onetbb source package (the version of the
# installed libtbb-dev), so that TSan sees the synchronisation inside TBB's task hand-off instead
# of reporting every task moved between threads as a race. Prints the directory holding
# libtbb.so.12 on its last line. Cached: a second run with the same version only prints it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT_NAME=tsan-tbb.sh
# shellcheck source=lib/debian.sh
. "$root/scripts/lib/debian.sh"

top=${TSAN_TBB_DIR:-$root/build-tsan-tbb}
libdir=$top/lib
version=$(dpkg-query -W -f='${Version}' libtbb-dev)
if [ -f "$libdir/libtbb.so.12" ] && [ "$(cat "$top/.version" 2>/dev/null)" = "$version" ]; then
    echo "$libdir"
    exit 0
fi

rm -rf "$top"
fetch_source onetbb "$top"
got=$(sed -n '1s/.*(\(.*\)).*/\1/p' "$top/src/debian/changelog")
[ "$got" = "$version" ] || note "warning: source $got differs from the installed libtbb-dev $version"
need_cmds cmake:cmake ninja:ninja-build g++:g++
# Upstream's own option: -fsanitize=thread on every TBB source. Only libtbb is needed.
cmake -S "$top/src" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF \
    -DTBBMALLOC_BUILD=OFF -DTBBMALLOC_PROXY_BUILD=OFF >&2
ninja -C "$top/build" tbb >&2
mkdir -p "$libdir"
cp -a "$top"/build/*/libtbb.so* "$libdir/"
echo "$version" >"$top/.version"
echo "$libdir"
