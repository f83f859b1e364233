#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command inside a fresh network namespace joined by a veth pair to a second namespace, so
# the net plugin's two test processes talk across a real (virtual) link: the command runs in
# namespace A (interface rsta<id>, 10.77.<n>.1/30); its peer process enters namespace B
# (RAILSCOPE_TEST_PEER_NETNS; interface rstb<id>, 10.77.<n>.2/30). Both ends select their
# interface with NCCL_SOCKET_IFNAME=rst; RAILSCOPE_TEST_PEER_ADDR is B's address. Everything is deleted on exit. Needs root and iproute2;
# exits 77 (skipped) without them. Addresses exist only inside these namespaces.
#
# usage: in_netns_pair.sh CMD [ARGS...]
set -euo pipefail

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1; then
  echo "in_netns_pair: SKIP (needs root and iproute2)"
  exit 77
fi

id=$$
ns_a="rs-tcp-a-$id"
ns_b="rs-tcp-b-$id"
if_a="rsta$id"
if_b="rstb$id"
net=$((id % 250))

cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add "$if_a" type veth peer name "$if_b"
ip link set "$if_a" netns "$ns_a"
ip link set "$if_b" netns "$ns_b"
ip -n "$ns_a" addr add "10.77.$net.1/30" dev "$if_a"
ip -n "$ns_b" addr add "10.77.$net.2/30" dev "$if_b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$if_a" up
ip -n "$ns_b" link set "$if_b" up

export RAILSCOPE_TEST_PEER_NETNS="$ns_b" RAILSCOPE_TEST_LOCAL_IFNAME="$if_a" RAILSCOPE_TEST_EXPECT_IFNAME="$if_a"
export NCCL_SOCKET_IFNAME=rst RAILSCOPE_TEST_PEER_ADDR="10.77.$net.2"
set +e
ip netns exec "$ns_a" "$@"
rc=$?
set -e
exit "$rc"
