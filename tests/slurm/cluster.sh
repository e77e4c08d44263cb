#!/usr/bin/env bash
# Start or stop a single-node SLURM cluster on this machine (localhost only), for tests.
#
#   tests/slurm/cluster.sh install        apt-get install munge, slurmctld, slurmd, slurm-client
#                                         (only what is missing; needs root)
#   tests/slurm/cluster.sh start STATE    write STATE/slurm.conf from tests/slurm/*.in, start
#                                         munged, slurmctld and slurmd; wait until the node is idle
#   tests/slurm/cluster.sh stop STATE     stop the daemons started for STATE (by their pid files)
#
# After `start`, `export SLURM_CONF=STATE/slurm.conf` points sbatch, squeue and scontrol at it.
# The daemons run as root with their sockets, spool and logs in STATE; ports 16817/16818
# (WHCORE_SLURM_PORT_BASE overrides the first). One file outside STATE: a copy of the config at
# /etc/slurm/slurm.conf, because srun inside a job reads the default path (the jobstep executor
# drops SLURM_CONF from the job's environment, and without a config srun asks DNS for one).
# `start` refuses to overwrite an /etc/slurm/slurm.conf it did not write; `stop` removes it.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ETC_CONF=/etc/slurm/slurm.conf
MARKER="# whcore test cluster (tests/slurm/cluster.sh), state:"

need_root() {
  if [[ $(id -u) != 0 ]]; then
    echo "cluster.sh: must run as root (the test cluster's daemons run as root)" >&2
    exit 3
  fi
}

cmd_install() {
  need_root
  local missing=()
  command -v munged >/dev/null || missing+=(munge)
  command -v slurmctld >/dev/null || missing+=(slurmctld)
  command -v slurmd >/dev/null || missing+=(slurmd)
  command -v sbatch >/dev/null || missing+=(slurm-client)
  if ((${#missing[@]} == 0)); then
    echo "cluster.sh: SLURM and munge already installed ($(slurmctld -V))"
    return
  fi
  command -v apt-get >/dev/null || { echo "cluster.sh: no apt-get to install ${missing[*]}" >&2; exit 3; }
  echo "cluster.sh: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d keeps the packages from starting their system services (we start our own).
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ((created_policy)) && rm -f "$policy"
  echo "cluster.sh: installed $(slurmctld -V)"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  local t=0
  until "$@" >/dev/null 2>&1; do
    sleep 0.5; t=$((t + 1))
    if ((t > limit * 2)); then
      echo "cluster.sh: timed out after ${limit}s waiting for $what" >&2
      return 1
    fi
  done
}

cmd_start() {
  need_root
  local state=${1:?usage: cluster.sh start STATE}
  mkdir -p "$state"
  state=$(cd "$state" && pwd)
  chmod 0755 "$state"
  mkdir -p "$state/ctld" "$state/slurmd" "$state/munge"
  chmod 0755 "$state/munge"

  local host cpus mem base
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
  base=${WHCORE_SLURM_PORT_BASE:-16817}
  for f in slurm.conf gres.conf; do
    sed -e "s|@HOST@|$host|g" -e "s|@STATE@|$state|g" -e "s|@CPUS@|$cpus|g" \
        -e "s|@MEM_MB@|$mem|g" -e "s|@CTLD_PORT@|$base|g" -e "s|@SLURMD_PORT@|$((base + 1))|g" \
        "$HERE/$f.in" >"$state/$f"
  done
  export SLURM_CONF=$state/slurm.conf
  if [[ -e $ETC_CONF ]] && ! grep -q "^$MARKER" "$ETC_CONF"; then
    echo "cluster.sh: $ETC_CONF exists and was not written by this script; not overwriting a" \
      "real SLURM configuration" >&2
    exit 3
  fi
  mkdir -p "$(dirname "$ETC_CONF")"
  { echo "$MARKER $state"; cat "$state/slurm.conf"; } >"$ETC_CONF"

  # munge: a fresh key for this cluster only, its own socket.
  dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$state/munge/munge.key"
  munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/munge.socket" \
    --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" \
    --seed-file="$state/munge/munged.seed"
  wait_for 10 munged test -S "$state/munge/munge.socket"

  slurmctld -f "$state/slurm.conf" -i
  wait_for 30 slurmctld scontrol ping
  slurmd -f "$state/slurm.conf"
  wait_for 30 "node $host to be idle" bash -c "sinfo -h -N -o %t | grep -qx idle"
  echo "cluster.sh: SLURM $(slurmctld -V | awk '{print $2}') up on $host (127.0.0.1:$base), $cpus CPUs, ${mem} MB, 2 (fake) GPUs; SLURM_CONF=$state/slurm.conf"
}

stop_pid() {  # stop_pid PIDFILE NAME
  local pidfile=$1 name=$2 pid
  [[ -s $pidfile ]] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    echo "cluster.sh: stopped $name (pid $pid)"
  fi
  rm -f "$pidfile"
}

cmd_stop() {
  local state=${1:?usage: cluster.sh stop STATE}
  [[ -d $state ]] || return 0
  if [[ -f $state/slurm.conf ]]; then
    # Cancel whatever the test left running before the daemons go.
    SLURM_CONF=$state/slurm.conf timeout 10 scancel --full --user root 2>/dev/null || true
  fi
  stop_pid "$state/slurmd.pid" slurmd
  stop_pid "$state/slurmctld.pid" slurmctld
  stop_pid "$state/munge/munged.pid" munged
  state=$(cd "$state" && pwd)
  if [[ -f $ETC_CONF ]] && [[ $(head -n 1 "$ETC_CONF") == "$MARKER $state" ]]; then
    rm -f "$ETC_CONF"
  fi
}

case ${1:-} in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) echo "usage: $0 install | start STATE | stop STATE" >&2; exit 2 ;;
esac
