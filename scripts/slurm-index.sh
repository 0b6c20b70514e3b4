#!/usr/bin/env bash
# Indexes a compilation database on a Slurm cluster (docs/shards.md): the shards as one job array
# (`symdex index --shard K/N`, each into its own store), then `symdex merge` as a job that runs
# once every shard succeeded. WORK must be a directory every node sees at the same path, and
# symdex must be installed there (or on every node) at the same path too.
#
#   scripts/slurm-index.sh -p BUILD --shards N --work WORK [--store OUT] [--threads T]
#                          [--partition P] [--time LIMIT] [--symdex PATH] [--wait]
#
#   --store     the merged store (default WORK/store); its parse times balance the next run
#   --threads   parse threads (and CPUs) per shard task (default 2)
#   --partition, --time   passed to sbatch for both jobs
#   --wait      wait for the merge and exit with its status (default: print the job ids)
set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build="" shards="" work="" out="" threads=2 partition="" limit="" symdex="" wait=0
while [ $# -gt 0 ]; do
  case "$1" in
    -p) build=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --store) out=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --time) limit=$2; shift 2 ;;
    --symdex) symdex=$2; shift 2 ;;
    --wait) wait=1; shift ;;
    -h | --help) usage ;;
    *) echo "slurm-index.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$build" ] && [ -n "$shards" ] && [ -n "$work" ] || usage
case "$shards" in '' | *[!0-9]* | 0) echo "slurm-index.sh: --shards needs a number > 0" >&2; exit 2 ;; esac
case "$threads" in '' | *[!0-9]* | 0) echo "slurm-index.sh: --threads needs a number > 0" >&2; exit 2 ;; esac
command -v sbatch >/dev/null || { echo "slurm-index.sh: sbatch not found (is this a Slurm login node?)" >&2; exit 2; }
symdex=${symdex:-$(command -v symdex || true)}
[ -x "$symdex" ] || { echo "slurm-index.sh: symdex not found; pass --symdex PATH" >&2; exit 2; }
symdex=$(realpath "$symdex")
build=$(realpath "$build")
mkdir -p "$work/logs" "$work/shards"
work=$(realpath "$work")
out=$(realpath -m "${out:-$work/store}")

common=(--parsable)
[ -n "$partition" ] && common+=(--partition="$partition")
[ -n "$limit" ] && common+=(--time="$limit")
# The shards split the database by the last merge's parse times, where there is one; every task
# reads the same store, which the merge rewrites only after all of them ended.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
balance=""
[ -f "$out/data.mdb" ] && balance="--balance-from $(q "$out")"
# A run submitted while the last one's jobs are still queued or running waits for them: its
# tasks would read a merged store about to change, and the last merge read shards being
# rewritten.
after=""
if [ -f "$work/last-merge-job" ]; then
  previous=$(cat "$work/last-merge-job")
  if [ -n "$previous" ] && [ -n "$(squeue -h -j "$previous" 2>/dev/null || true)" ]; then
    after="--dependency=afterany:$previous"
  fi
fi
array=$(sbatch "${common[@]}" ${after:+"$after"} --job-name=symdex-shard --array="0-$((shards - 1))" \
  --cpus-per-task="$threads" --output="$work/logs/shard-%a.log" \
  --wrap="exec $(q "$symdex") index -q -p $(q "$build") \
--store $(q "$work/shards")/\$SLURM_ARRAY_TASK_ID --shard \$SLURM_ARRAY_TASK_ID/$shards \
--threads $threads $balance")
array=${array%%;*}

stores=""
for ((k = 0; k < shards; k++)); do stores+=" $(q "$work/shards/$k")"; done
merge_args=("${common[@]}" --job-name=symdex-merge --dependency="afterok:$array"
  --kill-on-invalid-dep=yes --output="$work/logs/merge.log")
echo "shards: job $array (array 0-$((shards - 1)), logs $work/logs/shard-K.log)"
if [ "$wait" = 1 ]; then
  echo "merge: waiting (log $work/logs/merge.log)"
  rm -f "$work/logs/merge.log"
  # sbatch --wait exits 0 for a job cancelled because a shard failed: the job's state decides.
  merge=$(sbatch "${merge_args[@]}" --wait \
    --wrap="exec $(q "$symdex") merge --store $(q "$out")$stores" || true)
  merge=${merge%%;*}
  state=""
  if [ -n "$merge" ]; then
    echo "$merge" >"$work/last-merge-job"
    state=$(scontrol show job "$merge" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
  fi
  cat "$work/logs/merge.log" 2>/dev/null || true
  [ "$state" = COMPLETED ] && exit 0
  failed=$(scontrol show job "$array" -o 2>/dev/null |
    sed -n 's/.*ArrayTaskId=\([0-9]*\).*JobState=\([A-Z_]*\).*/\1 \2/p' |
    awk '$2 != "COMPLETED" { printf " %s", $1 }' || true)
  echo "slurm-index.sh: the merge did not succeed (job $merge: ${state:-unknown})${failed:+; shards that failed:$failed}; logs in $work/logs/" >&2
  exit 1
fi
merge=$(sbatch "${merge_args[@]}" --wrap="exec $(q "$symdex") merge --store $(q "$out")$stores")
merge=${merge%%;*}
echo "$merge" >"$work/last-merge-job"
echo "merge: job $merge (after every shard succeeds; log $work/logs/merge.log)"
echo "follow: squeue -j $array,$merge    the store: $out"
