#!/usr/bin/env bash
# Fetch a real C/C++ project from Debian source packages and write its
# compile_commands.json by running its own build system in configure-only mode
# (nothing is compiled). The last line of stdout is the absolute path of the
# build directory holding compile_commands.json, so callers can do:
#   dir=$(bench/corpus.sh leveldb | tail -n1)
set -euo pipefail

readonly KNOWN="leveldb rocksdb fmt"

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/.." && pwd)

usage() {
    cat <<EOF
usage: corpus.sh NAME [--dest DIR] [--force]

Fetch the Debian source package NAME into DIR/NAME/src, configure it (no build)
into DIR/NAME/build and print that build directory (holding
compile_commands.json) as the last line of stdout.

  NAME        one of: $KNOWN
  --dest DIR  corpus root (default: $repo_root/bench/corpora)
  --force     wipe DIR/NAME and fetch + configure again
  -h, --help  show this help
EOF
}

SCRIPT_NAME=corpus.sh
# shellcheck source=../scripts/lib/debian.sh
. "$repo_root/scripts/lib/debian.sh"

# Run CMake configure-only with Ninja; extra args are per-project options.
cmake_configure() {
    local top=$1; shift
    need_cmds cmake:cmake ninja:ninja-build g++:g++
    rm -rf "$top/build"
    cmake -S "$top/src" -B "$top/build" -G Ninja \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=Release "$@" >&2
}

# Check the database: valid JSON, non-empty, every TU exists on disk. A TU that
# lives under the build dir but does not exist yet is produced only at build
# time (we never build), so its entry is dropped rather than left dangling.
validate() {
    local db=$1 build=$2 n missing
    [ -f "$db" ] || die "no $db after configure"
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$db" 2>/dev/null \
        || die "$db is not valid JSON"
    missing=$(python3 - "$db" "$build" <<'PY'
import json, os, sys
db, build = sys.argv[1], os.path.realpath(sys.argv[2])
entries, keep, missing = json.load(open(db)), [], 0
for e in entries:
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if os.path.exists(f):
        keep.append(e)
    elif f.startswith(build + os.sep):
        print("corpus.sh: dropping TU generated only at build time: " + f, file=sys.stderr)
    else:
        print("corpus.sh: warning: missing TU " + f, file=sys.stderr)
        keep.append(e)
        missing += 1
if len(keep) != len(entries):
    with open(db, "w") as out:
        json.dump(keep, out, indent=2)
print(missing)
PY
)
    n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$db")
    [ "$n" -gt 0 ] || die "$db has no entries"
    [ "$missing" -eq 0 ] || note "warning: $missing of $n TUs in $db do not exist on disk"
    note "$db: $n TUs"
}

# Per-corpus configure. Each case runs in the corpus root ($1).
configure_leveldb() {
    local top=$1
    # Debian's patch comments out the add_subdirectory(third_party/...) calls and
    # links the system GoogleTest/benchmark instead, so tests and benchmarks
    # configure with these packages; libsqlite3-dev adds db_bench_sqlite3.
    # (kyotocabinet for db_bench_tree_db is left out: niche, one TU.)
    need_pkgs libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
    if grep -qE '^[[:space:]]*add_subdirectory\("third_party/googletest"\)' "$top/src/CMakeLists.txt" \
        && [ ! -f "$top/src/third_party/googletest/CMakeLists.txt" ]; then
        # Unpatched upstream tree without its submodules: tests cannot configure.
        note "leveldb: third_party submodules missing; disabling tests and benchmarks"
        cmake_configure "$top" -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF
    else
        cmake_configure "$top" -DLEVELDB_BUILD_TESTS=ON -DLEVELDB_BUILD_BENCHMARKS=ON
    fi
}

configure_rocksdb() {
    local top=$1
    # gflags is needed by db_bench, db_stress and the tools (WITH_GFLAGS is ON by
    # default and configure fails without it); compression libs stay off.
    need_pkgs libgflags-dev
    # Static library only: with the default shared+static every library TU
    # appears twice. PORTABLE=ON (as Debian builds it) avoids -march=native so
    # the flags do not depend on this CPU. Upstream forces tests off in Release
    # builds; build_version.cc is generated at configure time, so it is kept.
    cmake_configure "$top" -DROCKSDB_BUILD_SHARED=OFF -DPORTABLE=ON \
        -DFAIL_ON_WARNINGS=OFF -DWITH_LIBURING=OFF
}

configure_fmt() {
    local top=$1
    # {fmt} with its tests (they bundle their own GoogleTest): a template-heavy header library,
    # the names check's second corpus (bench/name_agreement.cpp).
    cmake_configure "$top" -DFMT_TEST=ON -DFMT_DOC=OFF -DFMT_INSTALL=OFF
}

name=""
dest=""
force=0
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) usage; exit 0 ;;
        --dest) [ $# -ge 2 ] || die "--dest needs a directory"; dest=$2; shift 2 ;;
        --dest=*) dest=${1#--dest=}; shift ;;
        --force) force=1; shift ;;
        -*) usage >&2; die "unknown option '$1'" ;;
        *) [ -z "$name" ] || die "only one corpus name allowed (got '$name' and '$1')"
           name=$1; shift ;;
    esac
done
[ -n "$name" ] || { usage >&2; exit 2; }

case $name in
    leveldb) ;;  # Google's LSM key-value store, ~1.23: small CMake C++ library (+ tests, benchmarks)
    rocksdb) ;;  # Facebook's leveldb fork: several hundred C++ TUs, CMake
    fmt) ;;      # {fmt} (Debian source package fmtlib): formatting library, CMake
    *) die "unknown corpus '$name'; known: $KNOWN" ;;
esac

dest=${dest:-$repo_root/bench/corpora}
mkdir -p "$dest"
dest=$(cd -- "$dest" && pwd)
top=$dest/$name
db=$top/build/compile_commands.json

if [ "$force" -eq 0 ] && [ -f "$db" ]; then
    note "reusing $top (pass --force to refetch)"
    echo "$top/build"
    exit 0
fi

[ "$force" -eq 1 ] && rm -rf "$top"
if [ ! -f "$top/src/.symdex-source" ]; then
    # The Debian source package of each corpus, where its name differs.
    case $name in fmt) package=fmtlib ;; *) package=$name ;; esac
    fetch_source "$package" "$top"
fi
"configure_$name" "$top"
validate "$db" "$top/build"
echo "$top/build"
