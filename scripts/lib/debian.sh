# Shell functions for fetching Debian source packages, sourced by bench/corpus.sh and
# scripts/tsan-tbb.sh. The caller sets SCRIPT_NAME (used in messages).
# shellcheck shell=bash

readonly APT_OPTS=(-o DPkg::Lock::Timeout=600)
readonly SRC_LIST=/etc/apt/sources.list.d/symdex-deb-src.sources

die() { echo "${SCRIPT_NAME:-symdex}: $*" >&2; exit 1; }
note() { echo "${SCRIPT_NAME:-symdex}: $*" >&2; }

# Only escalate when we are not already root (CI and dev boxes run as root).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_get() { as_root env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" "$@"; }

# Install packages, refreshing the package lists once if the first attempt fails.
install_pkgs() {
    [ $# -eq 0 ] && return 0
    note "installing $*"
    apt_get install -y --no-install-recommends "$@" >&2 \
        || { apt_get update >&2 && apt_get install -y --no-install-recommends "$@" >&2; }
}

# Install the Debian packages whose command is missing: args are "cmd:pkg".
need_cmds() {
    local pair missing=()
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
    done
    install_pkgs "${missing[@]}"
}

# Install Debian packages (by package name) that are not installed yet.
need_pkgs() {
    local p missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    install_pkgs "${missing[@]}"
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
        echo "# Added by symdex (scripts/lib/debian.sh): source packages for corpora and sanitizer builds."
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

