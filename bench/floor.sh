#!/usr/bin/env bash
# The parse-only floor: `clang++ -fsyntax-only` over every TU of a compilation database, with
# N parallel jobs, timed as a whole (wall/user/sys of all jobs, from /usr/bin/time).
#   bench/floor.sh BUILD_DIR|compile_commands.json [JOBS]
# Uses the same TUs symdex indexes: the first entry of each file, -o/-c/-M* flags dropped, the
# compiler replaced by clang++-16 or clang-16 (the version symdex's libclang pins).
set -euo pipefail
db=${1:?usage: floor.sh BUILD_DIR|compile_commands.json [JOBS]}
jobs=${2:-1}
[ -d "$db" ] && db="$db/compile_commands.json"
command -v clang++-16 >/dev/null || { echo "floor.sh: clang++-16 is missing (apt-get install clang-16)" >&2; exit 2; }

list=$(mktemp)
trap 'rm -f "$list"' EXIT
python3 - "$db" >"$list" <<'PY'
import json, shlex, sys
seen = set()
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if f in seen:
        continue
    seen.add(f)
    args = e.get("arguments") or shlex.split(e["command"])
    # The driver mode follows the original compiler, as in symdex (c++ -> clang++, cc -> clang).
    driver = "clang++-16" if "++" in args[0].rsplit("/", 1)[-1] else "clang-16"
    out, skip = [driver, "-fsyntax-only"], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD", "-MP") or a.startswith("-Werror"):
            continue
        out.append(a)
    print(shlex.quote(e["directory"]) + "\t" + " ".join(shlex.quote(a) for a in out))
PY
tus=$(wc -l <"$list")
# Each line: directory<TAB>command. Errors are counted, not fatal: the floor is a time.
/usr/bin/time -f "floor: jobs=$jobs tus=$tus wall=%e user=%U sys=%S maxrss_kb=%M" \
  xargs -d '\n' -P "$jobs" -n 1 bash -c 'cd "${1%%	*}" && eval "${1#*	}" 2>/dev/null || echo "floor: failed: ${1#*	}" >&2' _ <"$list"
