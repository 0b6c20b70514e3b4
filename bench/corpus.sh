#!/usr/bin/env bash
# Fetch a real C/C++ project from Debian source packages and write its
# compile_commands.json by running its own build system in configure-only mode
# (nothing is compiled). The last line of stdout is the absolute path of the
# build directory holding compile_commands.json, so callers can do:
#   dir=$(bench/corpus.sh leveldb | tail -n1)
set -euo pipefail

readonly KNOWN="leveldb rocksdb"
readonly APT_OPTS=(-o DPkg::Lock::Timeout=600)
readonly SRC_LIST=/etc/apt/sources.list.d/symdex-deb-src.sources

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

die() { echo "corpus.sh: $*" >&2; exit 1; }
note() { echo "corpus.sh: $*" >&2; }

# Only escalate when we are not already root (CI and dev boxes run as root).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_get() { as_root env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" "$@"; }

# Install the Debian packages whose command is missing: args are "cmd:pkg".
need_cmds() {
    local pair missing=()
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    note "installing ${missing[*]}"
    apt_get install -y --no-install-recommends "${missing[@]}" >&2 \
        || { apt_get update >&2 && apt_get install -y --no-install-recommends "${missing[@]}" >&2; }
}

# Install Debian packages (by package name) that are not installed yet.
need_pkgs() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    note "installing ${missing[*]}"
    apt_get install -y --no-install-recommends "${missing[@]}" >&2 \
        || { apt_get update >&2 && apt_get install -y --no-install-recommends "${missing[@]}" >&2; }
}

# Make sure apt knows deb-src entries. Returns 0 if it added one (so the caller
# must run apt-get update), 1 if some deb-src entry already existed.
add_deb_src() {
    if grep -rqsE '^[[:space:]]*(Types:.*\bdeb-src\b|deb-src[[:space:]])' \
        /etc/apt/sources.list /etc/apt/sources.list.d/; then
        return 1
    fi
    local codename tmp
    # shellcheck source=/dev/null
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    tmp=$(mktemp)
    # Copy the deb822 stanza of the main archive (the one listing the release
    # codename itself, e.g. "bookworm bookworm-updates", not -security) and only
    # flip its Types line, so URIs/Suites/Components/Signed-By stay identical.
    if [ -r /etc/apt/sources.list.d/debian.sources ]; then
        awk -v cn="$codename" 'BEGIN { RS = ""; ORS = "\n\n" }
            $0 ~ /(^|\n)Types:[^\n]*deb/ && $0 ~ ("(^|\n)Suites:([^\n]* )?" cn "( |\n|$)") {
                n = split($0, l, "\n"); out = ""
                for (i = 1; i <= n; i++) {
                    if (l[i] ~ /^#/) continue
                    if (l[i] ~ /^Types:/) l[i] = "Types: deb-src"
                    out = out l[i] "\n"
                }
                printf "%s\n", out; exit
            }' /etc/apt/sources.list.d/debian.sources >"$tmp"
    fi
    if [ ! -s "$tmp" ]; then
        # No deb822 file to mirror: fall back to the stock Debian 12 layout.
        cat >"$tmp" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    {
        echo "# Added by symdex bench/corpus.sh: source packages for benchmark corpora."
        cat "$tmp"
    } | as_root tee "$SRC_LIST" >/dev/null
    rm -f "$tmp"
    note "added $SRC_LIST"
    return 0
}

# apt-get source NAME into DIR/NAME, then rename the unpacked tree to src.
fetch_source() {
    local pkg=$1 top=$2 unpacked
    need_cmds dpkg-source:dpkg-dev
    if add_deb_src; then
        apt_get update >&2
    fi
    mkdir -p "$top"
    rm -rf "$top/src"
    # Clear leftovers of an interrupted fetch so the glob below is unambiguous.
    find "$top" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
    if ! (cd "$top" && apt-get "${APT_OPTS[@]}" source "$pkg" >&2); then
        # Most likely stale or missing package lists for the deb-src entry.
        note "apt-get source $pkg failed; running apt-get update and retrying"
        apt_get update >&2
        (cd "$top" && apt-get "${APT_OPTS[@]}" source "$pkg" >&2) \
            || die "apt-get source $pkg failed"
    fi
    unpacked=$(find "$top" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -n1)
    [ -n "$unpacked" ] || die "apt-get source $pkg left no $pkg-* directory in $top"
    mv "$unpacked" "$top/src"
    # The tarballs/.dsc are redundant once unpacked (patches are already applied).
    find "$top" -mindepth 1 -maxdepth 1 -type f \
        \( -name '*.dsc' -o -name '*.tar.*' -o -name '*.diff.gz' \) -delete
    echo "${unpacked##*/}" >"$top/src/.symdex-source"
}

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
    fetch_source "$name" "$top"
fi
"configure_$name" "$top"
validate "$db" "$top/build"
echo "$top/build"
