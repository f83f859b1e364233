# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# railscope test bed: guest-side helpers (bash). Source it from a test command:
#     . "$TESTBED_LIB"
# Everything here uses bash builtins where it matters: every fork+exec costs
# ~30 ms under TCG. Functions return non-zero and print to stderr on failure.
#
#   tb_sleep SEC                   sleep without forking (fractions allowed)
#   tb_set_mtu IF N                set the netdev MTU; rxe's active_mtu follows
#   tb_link_down IF / tb_link_up IF
#                                  take a veth down / up again; tb_link_up restores
#                                  the policy route that `ip link set down` flushed
#   tb_cable_pull IF / tb_cable_plug IF
#                                  (`testbed run --switch`) take IF's switch port down /
#                                  up: IF loses carrier but stays up, so rxe reports its
#                                  port down while the kernel keeps IF's routes and rxe
#                                  its QPs, as with a NIC whose cable is pulled.
#                                  tb_link_down instead flushes IF's routes: rxe then
#                                  fails any work request it sends on IF (local QP
#                                  operation error), which no NIC does
#   tb_steer_rx IF CPU             receive packet steering (rps_cpus of IF's rx-0): every
#                                  packet IF receives is processed on vCPU CPU, and rxe's
#                                  receive work with it. The test bed steers every veth to
#                                  vCPU 0 (one CPU per veth keeps a flow in order)
#   tb_as_user USER MEMLOCK_KIB CMD...
#                                  run CMD as USER (setpriv) with `ulimit -l` = KiB
#   tb_wait_port_active DEV [SEC]  wait until DEV port 1 is ACTIVE (default 30 s)
#   tb_gid_index_v4 DEV [VAR]      index of the IPv4-mapped RoCE v2 GID of DEV;
#                                  printed, or stored in VAR (no subshell needed)
#   tb_active_mtu DEV [VAR]        active_mtu of DEV port 1 (via ibv_devinfo)
#   tb_wait_tcp_listen PORT [SEC]  wait until something listens on TCP PORT (e.g. a
#                                  perftest / ibv_*_pingpong server: 18515), default 30 s
#
# Topology (set up by `testbed run` before CMD starts):
#   rxe0 @ vethA 10.0.0.1/24  <->  rxe1 @ vethB 10.0.0.2/24   (default netns,
#   policy routing tables 100/101 force traffic across the veth pair)
#   --switch ($TESTBED_SWITCH=1): the same, but vethA and vethB are each cabled to a port of
#   the bridge sw0 (swA, swB) instead of to each other.
#   --single: rxe0 @ dum0 10.0.0.1/24 only.
#   --rails N ($TESTBED_RAILS): rail i is rxe<2i> @ vethA<i> 10.0.<i>.1/24 <-> rxe<2i+1> @ vethB<i>
#   10.0.<i>.2/24, policy routing tables 100+2i / 101+2i.

[[ -n ${_TB_LIB_LOADED:-} ]] && return 0
_TB_LIB_LOADED=1

TB_IP_A=10.0.0.1
TB_IP_B=10.0.0.2

_tb_err() { printf 'testbed: %s\n' "$*" >&2; }

# Builtin sleep: read with a timeout on a pipe that never delivers data.
tb_sleep() {
    if [[ -z ${_TB_SLEEP_FD:-} ]]; then
        exec {_TB_SLEEP_FD}<> <(:) || { command sleep "$1"; return; }
    fi
    read -r -t "$1" -u "$_TB_SLEEP_FD" _ || :
}

# _tb_read FILE VAR: first line of FILE into VAR (builtin, no fork)
_tb_read() {
    local -n _tb_out=$2
    _tb_out=
    IFS= read -r _tb_out < "$1" 2>/dev/null
}

# _tb_policy_route IF VAR: the `ip -batch` line of the route that sends locally
# generated traffic for the peer address out of IF (empty if IF is not a veth end).
_tb_policy_route() {
    local -n _tb_route=$2
    case $1 in
        vethA) _tb_route="route replace $TB_IP_B dev vethA src $TB_IP_A table 100" ;;
        vethB) _tb_route="route replace $TB_IP_A dev vethB src $TB_IP_B table 101" ;;
        vethA[0-9]) local i=${1#vethA}
                    _tb_route="route replace 10.0.$i.2 dev $1 src 10.0.$i.1 table $((100 + 2 * i))" ;;
        vethB[0-9]) local i=${1#vethB}
                    _tb_route="route replace 10.0.$i.1 dev $1 src 10.0.$i.2 table $((101 + 2 * i))" ;;
        *) _tb_route= ;;
    esac
}

tb_steer_rx() {
    local ifc=${1:-} cpu=${2:-}
    [[ -n $ifc && $cpu =~ ^[0-9]+$ ]] || { _tb_err "usage: tb_steer_rx IF CPU"; return 2; }
    printf '%x\n' $((1 << cpu)) > "/sys/class/net/$ifc/queues/rx-0/rps_cpus"
}

tb_set_mtu() {
    local ifc=$1 mtu=$2
    [[ -n $ifc && $mtu =~ ^[0-9]+$ ]] || { _tb_err "usage: tb_set_mtu IF N"; return 2; }
    ip link set dev "$ifc" mtu "$mtu" || return
    # rxe recomputes active_mtu on NETDEV_CHANGEMTU; nothing else to do.
}

tb_link_down() {
    [[ -n ${1:-} ]] || { _tb_err "usage: tb_link_down IF"; return 2; }
    ip link set dev "$1" down
}

tb_link_up() {
    local ifc=${1:-} cmds
    [[ -n $ifc ]] || { _tb_err "usage: tb_link_up IF"; return 2; }
    cmds="link set dev $ifc up"
    # `ip link set down` flushed the policy route of this veth: put it back.
    local r; _tb_policy_route "$ifc" r
    [[ -n $r ]] && cmds+=$'\n'"$r"
    ip -batch - <<< "$cmds"
}

# _tb_switch_port IF VAR: the switch port IF is cabled to (`testbed run --switch`).
_tb_switch_port() {
    local -n _tb_port=$2
    case $1 in
        vethA) _tb_port=swA ;;
        vethB) _tb_port=swB ;;
        *) _tb_err "no switch port for '$1' (vethA or vethB)"; return 2 ;;
    esac
    [[ -e /sys/class/net/$_tb_port ]] ||
        { _tb_err "no switch port $_tb_port: run the test bed with --switch"; return 2; }
}

tb_cable_pull() {
    local port
    _tb_switch_port "${1:-}" port || return
    ip link set dev "$port" down
}

tb_cable_plug() {
    local port
    _tb_switch_port "${1:-}" port || return
    ip link set dev "$port" up
}

# tb_as_user USER MEMLOCK_KIB CMD...: the limit is set as root (soft and hard),
# then privileges are dropped, so CMD cannot raise it again.
tb_as_user() {
    local user=${1:-} kib=${2:-} name gid
    shift 2 || { _tb_err "usage: tb_as_user USER MEMLOCK_KIB CMD..."; return 2; }
    [[ $# -gt 0 && -n $user ]] || { _tb_err "usage: tb_as_user USER MEMLOCK_KIB CMD..."; return 2; }
    gid=
    while IFS=: read -r name _ _ gid _; do
        [[ $name == "$user" ]] && break
        gid=
    done < /etc/passwd
    [[ -n $gid ]] || { _tb_err "tb_as_user: no user '$user' in /etc/passwd"; return 2; }
    (
        if [[ -n $kib && $kib != - ]]; then
            ulimit -l "$kib" || exit 125
        fi
        exec setpriv --reuid="$user" --regid="$gid" --clear-groups -- "$@"
    )
}

tb_wait_port_active() {
    local dev=${1:-} max=${2:-30} st i n
    [[ -n $dev ]] || { _tb_err "usage: tb_wait_port_active DEV [SEC]"; return 2; }
    n=$(( max * 20 ))
    for (( i = 0; i <= n; i++ )); do
        _tb_read "/sys/class/infiniband/$dev/ports/1/state" st
        [[ $st == *ACTIVE* ]] && return 0
        tb_sleep 0.05
    done
    _tb_err "port 1 of $dev not ACTIVE after ${max}s (state: ${st:-missing})"
    return 1
}

tb_gid_index_v4() {
    local dev=${1:-} p i gid type
    [[ -n $dev ]] || { _tb_err "usage: tb_gid_index_v4 DEV [VAR]"; return 2; }
    p=/sys/class/infiniband/$dev/ports/1
    [[ -d $p/gids ]] || { _tb_err "tb_gid_index_v4: no device $dev"; return 1; }
    for (( i = 0; i < 1024; i++ )); do
        _tb_read "$p/gids/$i" gid || break
        [[ $gid == 0000:0000:0000:0000:0000:ffff:* ]] || continue
        _tb_read "$p/gid_attrs/types/$i" type
        [[ $type == "RoCE v2" ]] || continue
        if [[ -n ${2:-} ]]; then printf -v "$2" '%s' "$i"; else echo "$i"; fi
        return 0
    done
    _tb_err "tb_gid_index_v4: $dev has no IPv4-mapped RoCE v2 GID"
    return 1
}

tb_active_mtu() {
    local dev=${1:-} out
    [[ -n $dev ]] || { _tb_err "usage: tb_active_mtu DEV [VAR]"; return 2; }
    out=$(ibv_devinfo -d "$dev" -i 1) || return
    [[ $out =~ active_mtu:[[:space:]]*([0-9]+) ]] || { _tb_err "tb_active_mtu: no active_mtu for $dev"; return 1; }
    if [[ -n ${2:-} ]]; then printf -v "$2" '%s' "${BASH_REMATCH[1]}"; else echo "${BASH_REMATCH[1]}"; fi
}

tb_wait_tcp_listen() {
    local port=${1:-} max=${2:-30} hex i f laddr st
    [[ $port =~ ^[0-9]+$ ]] || { _tb_err "usage: tb_wait_tcp_listen PORT [SEC]"; return 2; }
    printf -v hex '%04X' "$port"
    for (( i = 0; i <= max * 20; i++ )); do
        for f in /proc/net/tcp /proc/net/tcp6; do
            [[ -r $f ]] || continue
            while read -r _ laddr _ st _; do
                [[ $st == 0A && $laddr == *":$hex" ]] && return 0
            done < "$f"
        done
        tb_sleep 0.05
    done
    _tb_err "nothing listens on TCP port $port after ${max}s"
    return 1
}
