#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Inside the soft-RoCE guest: the tuner reads the node's NICs (rxe0, rxe1: active RoCE ports) through
# lib/node, the same way `railscope doctor` does, and its model then decides for a 2-node job.
#   nic_facts.sh <path to railscope>
set -eu
cli=$1
out=$(env -u RAILSCOPE_TUNER_NICS -u RAILSCOPE_TUNER_NIC_GBIT \
  "$cli" tuner explain --nodes 2 --gpus-per-node 1 --coll allgather --max-bytes 64 --json)
echo "$out" | head -16
fail() { echo "FAIL: $*" >&2; exit 1; }
echo "$out" | grep -q '"nic_source": "node"' || fail "NIC facts did not come from the node"
echo "$out" | grep -q '"nics": 2' || fail "expected the two rxe ports"
echo "$out" | grep -q '"reason": "model"' || fail "the model did not decide"
echo "ok: tuner read the rxe ports and decided"
