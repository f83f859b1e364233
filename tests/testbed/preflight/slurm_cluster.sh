# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A private one-node Slurm cluster (Debian 12: Slurm 22.05, munge 0.5) for a test: munged, slurmctld
# and slurmd, every file of theirs (configuration, munge key and socket, state, spool, logs, pid files)
# under one folder that the caller gives, which must be on a local file system (munged cannot bind its
# socket on 9p: the test bed guest's tmpfs). Source it after the test bed's guest-lib.sh (tb_sleep), then:
#   slurm_start DIR NODE [TIMEOUT]  start the three daemons from DIR/slurm.conf (SLURM_CONF is exported
#                                   for srun/sinfo), NODE with 2 CPUs in partition "tb", and wait up to
#                                   TIMEOUT s (default 60) for NODE to be idle; on failure: which step
#                                   failed and the daemons' log tails on stderr, status 1
#   slurm_stop                      stop the daemons slurm_start started (by their pids)
#   slurm_logs                      the tails of the daemons' logs, on stderr
# NODE is the name slurmd registers (slurmd -N) and srun puts in SLURM_STEP_NODELIST; it must resolve
# to this machine (the test bed's hostname does not resolve in the guest: give localhost).
# Configuration: https://slurm.schedmd.com/slurm.conf.html and cgroup.conf.html (22.05). slurmd always
# loads a cgroup plugin and needs a cgroup file system on /sys/fs/cgroup (the guest mounts cgroup2);
# without systemd, IgnoreSystemd=yes lets it make its scope itself. Nothing is confined: processes are
# tracked through /proc (proctrack/linuxproc), no task plugin.

_SLURM_PIDS=()
_SLURM_DIR=

slurm_logs() {
    local f
    for f in "$_SLURM_DIR"/munged.out "$_SLURM_DIR"/slurmctld.log "$_SLURM_DIR"/slurmd.log; do
        [[ -s $f ]] && { printf -- '--- %s (last 25 lines)\n' "$f"; tail -n 25 "$f"; } >&2
    done
}

# _slurm_fail STEP: say which step failed, with the logs, and stop what started.
_slurm_fail() {
    printf 'slurm: %s\n' "$1" >&2
    slurm_logs
    slurm_stop
    return 1
}

slurm_start() {
    local dir=$1 node=$2 timeout=${3:-60} plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm state i
    _SLURM_DIR=$dir
    # munged wants its socket's folder searchable by all and its key readable by root only.
    if ! mkdir -p "$dir"/state "$dir"/spool "$dir"/munge || ! chmod 0711 "$dir" "$dir"/munge; then
        _slurm_fail "cannot create $dir"
        return 1
    fi
    if ! dd if=/dev/urandom of="$dir"/munge/munge.key bs=1024 count=1 status=none \
        || ! chmod 0400 "$dir"/munge/munge.key; then
        _slurm_fail "cannot write the munge key"
        return 1
    fi
    # --origin: munged otherwise resolves the hostname for the credentials' origin address.
    munged -F --force --key-file="$dir"/munge/munge.key --socket="$dir"/munge/munge.socket \
        --pid-file="$dir"/munge/munged.pid --seed-file="$dir"/munge/munged.seed --log-file="$dir"/munged.log \
        --origin=127.0.0.1 > "$dir"/munged.out 2>&1 &
    _SLURM_PIDS+=($!)
    cat > "$dir"/slurm.conf <<- CONF
	ClusterName=railscope
	SlurmctldHost=$node(127.0.0.1)
	AuthType=auth/munge
	AuthInfo=socket=$dir/munge/munge.socket
	CredType=cred/munge
	SlurmUser=root
	SlurmdUser=root
	PluginDir=$plugins
	StateSaveLocation=$dir/state
	SlurmdSpoolDir=$dir/spool
	SlurmctldPidFile=$dir/slurmctld.pid
	SlurmdPidFile=$dir/slurmd.pid
	SlurmctldLogFile=$dir/slurmctld.log
	SlurmdLogFile=$dir/slurmd.log
	SlurmctldPort=6817
	SlurmdPort=6818
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	SelectType=select/linear
	SchedulerType=sched/builtin
	MpiDefault=none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	ReturnToService=2
	NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
	PartitionName=tb Nodes=$node Default=YES MaxTime=INFINITE State=UP
	CONF
    printf 'IgnoreSystemd=yes\n' > "$dir"/cgroup.conf
    export SLURM_CONF=$dir/slurm.conf
    # With IgnoreSystemd, slurmd makes system.slice/<node>_slurmstepd.scope itself (mkdir, not -p) and
    # moves into it; systemd would have made the slice.
    if [[ -e /sys/fs/cgroup/cgroup.controllers ]] && ! mkdir -p /sys/fs/cgroup/system.slice; then
        _slurm_fail "cannot create /sys/fs/cgroup/system.slice"
        return 1
    fi
    # munged's socket first: slurmctld and slurmd authenticate through it.
    for (( i = 0; i < 100; i++ )); do
        [[ -S $dir/munge/munge.socket ]] && break
        tb_sleep 0.1
    done
    [[ -S $dir/munge/munge.socket ]] || { _slurm_fail "munged did not create its socket in 10 s"; return 1; }
    slurmctld -D -i -f "$SLURM_CONF" > "$dir"/slurmctld.out 2>&1 &
    _SLURM_PIDS+=($!)
    slurmd -D -N "$node" -f "$SLURM_CONF" > "$dir"/slurmd.out 2>&1 &
    _SLURM_PIDS+=($!)
    state=
    for (( i = 0; i < timeout * 4; i++ )); do
        state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
        [[ $state == idle ]] && return 0
        kill -0 "${_SLURM_PIDS[1]}" 2>/dev/null || { _slurm_fail "slurmctld exited"; return 1; }
        kill -0 "${_SLURM_PIDS[2]}" 2>/dev/null || { _slurm_fail "slurmd exited"; return 1; }
        tb_sleep 0.25
    done
    _slurm_fail "node $node not idle after ${timeout} s (state '${state}')"
}

slurm_stop() {
    local p
    for p in "${_SLURM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${_SLURM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    _SLURM_PIDS=()
}
