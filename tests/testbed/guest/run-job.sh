# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# railscope test bed: guest-side job runner. Runs as root, chrooted into the
# host root, started by the initramfs /init with the control folder as $1.
# Reads ctl/job (written by the host's `testbed run`), mounts the scratch
# folder, builds the rxe topology, runs CMD and writes its status to ctl/rc.
set -u
CTL=$1
# shellcheck source=/dev/null
. "$CTL/job"
# shellcheck source=/dev/null
. "$CTL/guest-lib.sh"

_uptime() { local u _; read -r u _ < /proc/uptime; printf '%s' "$u"; }
phase() { printf '%s\n' "$1" > "$CTL/phase"; printf '[testbed %ss] %s\n' "$(_uptime)" "$1"; }
fail() {  # infrastructure failure: 125
    printf '[testbed] FATAL: %s\n' "$*"
    printf '%s\n' "$*" > "$CTL/error"
    echo 125 > "$CTL/rc"
    exit 125
}

phase "mounting scratch and host folders"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [[ -n $TB_SCRATCH ]]; then
    [[ -d $TB_SCRATCH ]] || mkdir -p "$TB_SCRATCH" || fail "cannot create $TB_SCRATCH"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 scratch "$TB_SCRATCH" \
        || fail "cannot mount the scratch folder at $TB_SCRATCH"
fi
# Host folders hidden by the guest's tmpfs on /tmp (checkout or cwd under /tmp):
# bind them read-only from the untouched view of the host root.
for d in "${TB_BINDS[@]}"; do
    [[ $d == /tmp/* && $d != "$TB_SCRATCH" && $d != "$TB_SCRATCH"/* ]] || continue
    [[ -d /run/testbed/hostroot$d ]] || continue
    mkdir -p "$d" && mount --bind /run/testbed/hostroot"$d" "$d" && mount -o remount,bind,ro "$d" \
        || printf '[testbed] warning: cannot bind host folder %s\n' "$d"
done

phase "network setup"
# A veth hands each packet to the receive backlog of the vCPU its sender runs on; rxe's requester moves
# between the two vCPUs, so one RoCE flow can be processed on both at once and arrive out of order,
# which RoCE's go-back-N takes as loss (out_of_seq_request, retransmissions: railscope's
# fabric.packet_loss in a healthy run). Receive packet steering with one CPU in the map puts every
# packet of the veth on vCPU 0's backlog, in order, as a real link delivers a flow. Measured: 7, 0, 3,
# 0, 8 lost-packet events per 6 s stream without it, 0 in each of 4 streams with it.
in_order_wire() {
    tb_steer_rx "$1" 0 || printf '[testbed] warning: no RPS on %s\n' "$1"
}
for k in all default; do
    echo 0 > /proc/sys/net/ipv4/conf/$k/rp_filter
    echo 1 > /proc/sys/net/ipv4/conf/$k/accept_local
done
if [[ $TB_SINGLE == 1 ]]; then
    # One device: both ends of a connection on rxe0 (loopback through rxe).
    ip -batch - <<- NET || fail "ip setup (single) failed"
	link add dum0 mtu $TB_MTU_A type dummy
	addr add $TB_IP_A/24 dev dum0
	link set dum0 up
	NET
    rdma link add rxe0 type rxe netdev dum0 || fail "rdma link add rxe0 failed"
    DEVS=(rxe0)
elif [[ ${TB_RAILS:-0} -gt 0 ]]; then
    # --rails N: rail i is its own veth pair and subnet, with the same policy routing as the one pair
    # below (tables 100+2i / 101+2i); rxe<2i> on vethA<i> ("host" A), rxe<2i+1> on vethB<i> (B).
    net=() rdmas=() DEVS=()
    for (( i = 0; i < TB_RAILS; i++ )); do
        a=10.0.$i.1 b=10.0.$i.2
        net+=("link add vethA$i mtu $TB_MTU_A type veth peer name vethB$i mtu $TB_MTU_B"
              "addr add $a/24 dev vethA$i" "addr add $b/24 dev vethB$i"
              "link set vethA$i up" "link set vethB$i up"
              "rule add pref $((10 + 2 * i)) iif lo to $b lookup $((100 + 2 * i))"
              "rule add pref $((11 + 2 * i)) iif lo to $a lookup $((101 + 2 * i))"
              "route add $b dev vethA$i src $a table $((100 + 2 * i))"
              "route add $a dev vethB$i src $b table $((101 + 2 * i))")
        rdmas+=("link add rxe$((2 * i)) type rxe netdev vethA$i" "link add rxe$((2 * i + 1)) type rxe netdev vethB$i")
        DEVS+=("rxe$((2 * i))" "rxe$((2 * i + 1))")
    done
    net+=("rule add pref 100 lookup local" "rule del pref 0")
    printf '%s\n' "${net[@]}" | ip -batch - || fail "ip setup (--rails $TB_RAILS) failed"
    for (( i = 0; i < TB_RAILS; i++ )); do
        for v in vethA$i vethB$i; do
            echo 0 > /proc/sys/net/ipv4/conf/$v/rp_filter
            echo 1 > /proc/sys/net/ipv4/conf/$v/accept_local
            in_order_wire "$v"
        done
    done
    printf '%s\n' "${rdmas[@]}" | rdma -b - || fail "rdma link add (--rails $TB_RAILS) failed"
else
    # Two "hosts" in the default namespace (rxe's UDP socket lives in init_net;
    # separate namespaces hang). Policy routing makes traffic for the peer address
    # leave through the own veth instead of being short-cut through `lo`.
    # MTUs are set before `rdma link add`; rxe also follows later changes.
    if [[ ${TB_SWITCH:-0} == 1 ]]; then
        # --switch: each veth is cabled to a port of the bridge sw0 (swA, swB), as a host's NIC is to
        # its switch. tb_cable_pull takes a switch port down: the NIC loses carrier and stays up. The
        # switch ports take the larger MTU (a switch passes jumbo frames; each NIC still drops what
        # exceeds its own MTU, as with the direct pair). No STP: the ports forward at once. sw0 itself
        # answers no ARP: by default Linux answers for any of its addresses on any interface, and the
        # hosts would learn the bridge's MAC for each other.
        sw_mtu=$(( TB_MTU_A > TB_MTU_B ? TB_MTU_A : TB_MTU_B ))
        ip -batch - <<- NET || fail "ip setup (switch) failed"
	link add vethA mtu $TB_MTU_A type veth peer name swA mtu $sw_mtu
	link add vethB mtu $TB_MTU_B type veth peer name swB mtu $sw_mtu
	link add sw0 type bridge stp_state 0 forward_delay 0
	link set swA master sw0
	link set swB master sw0
	link set sw0 arp off up
	link set swA up
	link set swB up
	NET
        for i in sw0 swA swB; do
            [[ -e /proc/sys/net/ipv6/conf/$i/disable_ipv6 ]] && echo 1 > /proc/sys/net/ipv6/conf/$i/disable_ipv6
        done
        in_order_wire swA
        in_order_wire swB
    else
        ip link add vethA mtu "$TB_MTU_A" type veth peer name vethB mtu "$TB_MTU_B" \
            || fail "ip setup (veth pair) failed"
    fi
    ip -batch - <<- NET || fail "ip setup (addresses and policy routing) failed"
	addr add $TB_IP_A/24 dev vethA
	addr add $TB_IP_B/24 dev vethB
	link set vethA up
	link set vethB up
	rule add pref 10 iif lo to $TB_IP_B lookup 100
	rule add pref 11 iif lo to $TB_IP_A lookup 101
	route add $TB_IP_B dev vethA src $TB_IP_A table 100
	route add $TB_IP_A dev vethB src $TB_IP_B table 101
	rule add pref 100 lookup local
	rule del pref 0
	NET
    for i in vethA vethB; do
        echo 0 > /proc/sys/net/ipv4/conf/$i/rp_filter
        echo 1 > /proc/sys/net/ipv4/conf/$i/accept_local
        in_order_wire "$i"
    done
    rdma -b - <<- NET || fail "rdma link add failed"
	link add rxe0 type rxe netdev vethA
	link add rxe1 type rxe netdev vethB
	NET
    DEVS=(rxe0 rxe1)
fi
phase "waiting for ${DEVS[*]} to become ACTIVE"
for d in "${DEVS[@]}"; do
    tb_wait_port_active "$d" 60 || fail "$d did not become ACTIVE"
    for (( i = 0; i < 200; i++ )); do
        tb_gid_index_v4 "$d" _gx 2>/dev/null && break
        tb_sleep 0.05
    done
    [[ -n ${_gx:-} ]] || fail "$d has no IPv4 RoCE v2 GID"
    unset _gx
done

# Environment of CMD: clean, plus the allow-listed host variables and --env.
envv=(PATH="$PATH" HOME=/tmp TERM=dumb LANG=C.UTF-8 LC_ALL=C.UTF-8
      TESTBED=1 TESTBED_LIB="$CTL/guest-lib.sh" TESTBED_SCRATCH="$TB_SCRATCH"
      TESTBED_IP_A="$TB_IP_A" TESTBED_IP_B="$TB_IP_B" TESTBED_SINGLE="$TB_SINGLE" TESTBED_RAILS="${TB_RAILS:-0}"
      TESTBED_SWITCH="${TB_SWITCH:-0}" "${TB_ENV[@]}")
[[ -n $TB_USER ]] && envv+=(USER="$TB_USER" LOGNAME="$TB_USER")

cd "$TB_CWD" 2>/dev/null || {
    printf '[testbed] warning: %s is not visible in the guest; running in %s\n' "$TB_CWD" "${TB_SCRATCH:-/}"
    cd "${TB_SCRATCH:-/}" || cd /
}

if [[ $TB_INTERACTIVE == 1 ]]; then
    phase "interactive shell (exit to power off)"
    # The real serial tty (not /dev/console) so that it can be the controlling terminal.
    setsid -c env -i "${envv[@]}" TERM=linux PS1='testbed:\w# ' bash --norc -i \
        < /dev/ttyS0 > /dev/ttyS0 2>&1
    echo $? > "$CTL/rc"
    exit 0
fi

priv=()
if [[ -n $TB_USER ]]; then
    gid=
    while IFS=: read -r name _ _ gid _; do
        [[ $name == "$TB_USER" ]] && break
        gid=
    done < /etc/passwd
    [[ -n $gid ]] || fail "--user $TB_USER: no such user in the guest's /etc/passwd"
    priv=(setpriv --reuid="$TB_USER" --regid="$gid" --clear-groups --)
fi
if [[ -n $TB_MEMLOCK ]]; then
    ulimit -l "$TB_MEMLOCK" || fail "ulimit -l $TB_MEMLOCK failed"
fi

phase "running CMD (timeout ${TB_TIMEOUT}s): ${TB_CMD[*]}"
_uptime > "$CTL/cmd-start"
# timeout(1) runs CMD in its own process group and kills the whole group.
timeout -k 10 "$TB_TIMEOUT" env -i "${envv[@]}" "${priv[@]}" "${TB_CMD[@]}" \
    < /dev/null > /dev/ttyS1 2>&1
rc=$?
_uptime > "$CTL/cmd-end"
phase "CMD exited with status $rc"
echo "$rc" > "$CTL/rc"
exit 0
