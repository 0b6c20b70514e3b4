#!/usr/bin/env bash
# symdex on a real Slurm (issue 14): starts munged, slurmctld and slurmd on localhost
# (scripts/slurm-local.sh, tests/slurm/slurm.conf.in), indexes a copy of the golden fixture as a
# job array of 4 shards and a merge job (scripts/slurm-index.sh), and requires the merged store to
# dump as a single-machine index does; then edits a header, runs the jobs again, and requires the
# same of the incremental merge. Stops everything it started. Usage: slurm_test.sh SYMDEX_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scripts=$here/../../scripts
symdex=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/symdex-slurm-XXXXXX")
cleanup() {
  "$scripts/slurm-local.sh" stop "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT

root=$work/tree
"$here/../fixtures/golden_tree.sh" "$root"

eval "$("$scripts/slurm-local.sh" start "$work/cluster")"
export SLURM_CONF

check() { # the merged store against a fresh single-machine index of the tree as it is now
  rm -rf "$work/whole"
  "$symdex" index -q -p "$root" --store "$work/whole" --threads 2 >/dev/null 2>&1
  if ! cmp -s <("$symdex" dump --store "$work/whole") <("$symdex" dump --store "$work/job/store"); then
    echo "FAIL ($1): the merged store differs from a single-machine index:" >&2
    diff <("$symdex" dump --store "$work/whole") <("$symdex" dump --store "$work/job/store") | head -n 20 >&2
    exit 1
  fi
  echo "ok ($1): the merged store dumps as a single-machine index"
}

timeout 300 "$scripts/slurm-index.sh" -p "$root" --shards 4 --work "$work/job" --symdex "$symdex" \
  --threads 1 --wait
check "4 shards"
for k in 0 1 2 3; do
  [ -f "$work/job/shards/$k/data.mdb" ] || { echo "FAIL: shard $k wrote no store" >&2; exit 1; }
done

# A header every TU includes changes: every shard re-parses what changed; the merge follows.
sed -i 's/struct Point {/struct Point {\n    int addedBySlurmTest = 0;/' "$root/include/shapes.h"
grep -q addedBySlurmTest "$root/include/shapes.h"
timeout 300 "$scripts/slurm-index.sh" -p "$root" --shards 4 --work "$work/job" --symdex "$symdex" \
  --threads 1 --wait
check "incremental"
"$symdex" find addedBySlurmTest --store "$work/job/store" | grep -q shapes.h

# A shard that fails (its store is a file, not a directory) fails the merge job, which reports it.
mv "$work/job/shards/2" "$work/job/shard-2.saved"
echo "not a store" >"$work/job/shards/2"
if timeout 300 "$scripts/slurm-index.sh" -p "$root" --shards 4 --work "$work/job" \
  --symdex "$symdex" --threads 1 --wait >"$work/failed.log" 2>&1; then
  echo "FAIL: a failed shard let the merge succeed" >&2
  exit 1
fi
rm "$work/job/shards/2"
mv "$work/job/shard-2.saved" "$work/job/shards/2"
grep -q "shards that failed: 2" "$work/failed.log"
check "after a failed run"
[ -z "$(squeue -h)" ] || { echo "FAIL: jobs left in the queue" >&2; squeue >&2; exit 1; }
echo "ok: a failed shard fails the merge job, and the store keeps the last merge"
