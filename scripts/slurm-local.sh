#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, from Debian's munge, slurmctld and slurmd, in a
# scratch directory: for tests/slurm/slurm_test.sh and for trying scripts/slurm-index.sh without a
# cluster. Everything it starts runs as the calling user and lives under DIR.
#
#   scripts/slurm-local.sh start DIR   # prints "export SLURM_CONF=DIR/slurm.conf"
#   scripts/slurm-local.sh stop DIR    # stops slurmd, slurmctld and munged
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: slurm-local.sh start|stop DIR}
dir=${2:?usage: slurm-local.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop_pidfile() {
  local pid
  pid=$(cat "$1" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

if [ "$cmd" = stop ]; then
  stop_pidfile "$dir/slurmd.pid"
  stop_pidfile "$dir/slurmctld.pid"
  stop_pidfile "$dir/munge/munged.pid"
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: slurm-local.sh start|stop DIR" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "slurm-local.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
done
export PATH=$PATH:/usr/sbin

# munge: its own key and socket, so that nothing of the machine's munge is used or needed.
mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
chmod 700 "$dir/munge"
if [ ! -s "$dir/munge/munge.key" ]; then
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
fi
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
  --seed-file="$dir/munge/munged.seed"

# Two free ports: the kernel picks them.
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r ctld_port slurmd_port <<<"$ports"
host=$(hostname -s)
sed -e "s|@DIR@|$dir|g" -e "s|@HOST@|$host|g" -e "s|@USER@|$(id -un)|g" \
  -e "s|@CPUS@|$(nproc)|g" -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" \
  "$here/../tests/slurm/slurm.conf.in" >"$dir/slurm.conf"
export SLURM_CONF=$dir/slurm.conf
# If a daemon does not start, stop what did: the caller gets an error and nothing running.
trap '"$0" stop "$dir"' ERR
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"

# Up when the node takes jobs.
for _ in $(seq 150); do
  state=$(sinfo -h -o '%T' 2>/dev/null | head -n1 || true)
  case "$state" in idle | mixed | allocated) echo "export SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
  sleep 0.2
done
echo "slurm-local.sh: the node did not come up (state '${state:-none}'); logs in $dir" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
"$0" stop "$dir"
exit 1
