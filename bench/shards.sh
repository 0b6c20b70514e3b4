#!/usr/bin/env bash
# Sharded indexing measured (issue 14, docs/shards.md): for N = 1, 2, 4, 8, the N shards of a
# corpus run ONE AFTER ANOTHER, each with --threads 1 (so a shard's time is the work a machine
# of one core would do), then `symdex merge`; prints each shard's wall/user time and peak RSS,
# the merge's time, the merged store's size, and whether its dump equals N = 1's.
# Usage: bench/shards.sh SYMDEX CORPUS (leveldb, rocksdb, fmt) [WORK]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
symdex=$(realpath "${1:?usage: bench/shards.sh SYMDEX CORPUS [WORK]}")
corpus=${2:?usage: bench/shards.sh SYMDEX CORPUS [WORK]}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/symdex-shards-XXXXXX")}
build=$("$here/corpus.sh" "$corpus" | tail -n1)
mkdir -p "$work"
timed() { # prints "wall user rss_mib" of the command
  /usr/bin/time -f "%e %U %M" -o "$work/time.txt" "$@" >/dev/null 2>&1
  awk '{ printf "%.2f %.2f %.0f", $1, $2, $3 / 1024 }' "$work/time.txt"
}
mib() { awk '{ printf "%.1f", $1 / 1048576 }' <<<"$(stat -c %s "$1")"; }
echo "corpus $corpus ($build); shards run one after another, 1 thread each; work $work"
printf '%-3s %-34s %-11s %-11s %-9s %-11s %-10s %s\n' N "per shard: wall s (user s)" "max wall" \
  "sum user" "max RSS" "merge s" "store MiB" "dump = N 1"
for n in 1 2 4 8; do
  rm -rf "$work/$n"
  walls=() users=() rss=0 cells=""
  for ((k = 0; k < n; k++)); do
    read -r wall user mem <<<"$(timed "$symdex" index -q -p "$build" --store "$work/$n/$k" \
      --shard "$k/$n" --threads 1 --index-priority normal)"
    walls+=("$wall") users+=("$user")
    cells+="$wall ($user) "
    [ "$mem" -gt "$rss" ] && rss=$mem
  done
  merge=$(timed "$symdex" merge --store "$work/$n/merged" $(for ((k = 0; k < n; k++)); do echo "$work/$n/$k"; done) | cut -d' ' -f1)
  "$symdex" dump --store "$work/$n/merged" >"$work/$n.dump"
  same=$(cmp -s "$work/1.dump" "$work/$n.dump" && echo yes || echo NO)
  max=$(printf '%s\n' "${walls[@]}" | sort -g | tail -n1)
  sum=$(printf '%s\n' "${users[@]}" | awk '{ s += $1 } END { printf "%.2f", s }')
  [ "$n" -le 4 ] || cells="$(printf '%s\n' "${walls[@]}" | sort -g | head -n1)-$max (8 shards) "
  printf '%-3s %-34s %-11s %-11s %-9s %-11s %-10s %s\n' "$n" "$cells" "$max" "$sum" "$rss MiB" \
    "$merge" "$(mib "$work/$n/merged/data.mdb")" "$same"
done
