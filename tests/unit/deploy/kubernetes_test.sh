#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/kubernetes: every kustomization renders (`kubectl kustomize`, kubectl 1.31 from the npm tools),
# the renders validate (validate_k8s.js: Kubernetes OpenAPI schemas + strict fields, CRD schemas,
# cross-references), the renders carry what the RDMA path needs, a bad manifest set is rejected with the
# expected reasons, and the doctor DaemonSet's loop publishes what it promises.
set -euo pipefail
ROOT=$1
TOOLS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
K8S="$ROOT/deploy/kubernetes"
KUBECTL="$TOOLS/bin/kubectl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. Render every kustomization.
renders=()
for dir in base overlays/sriov overlays/rails8 doctor network-operator; do
  out="$WORK/$(echo "$dir" | tr / -).yaml"
  "$KUBECTL" kustomize "$K8S/$dir" > "$out" || fail "kubectl kustomize $dir"
  renders+=("$out")
done
echo "rendered: ${renders[*]##*/}"

# 2. Validate the renders.
node "$HERE/validate_k8s.js" "$TOOLS" "${renders[@]}" || fail "rendered manifests do not validate"

# 3. The renders contain the RDMA essentials.
base="$WORK/base.yaml"; sriov="$WORK/overlays-sriov.yaml"; doctor="$WORK/doctor.yaml"
rails8="$WORK/overlays-rails8.yaml"
grep -q "rdma/hca_shared_devices_a: 1" "$base" || fail "base: no rdma/hca_shared_devices_a request"
grep -q -- "- IPC_LOCK" "$base" || fail "base: no IPC_LOCK"
grep -q 'k8s.v1.cni.cncf.io/networks: .*rdma-net' "$base" || fail "base: no Multus annotation"
grep -q "NCCL_NET_PLUGIN: /opt/railscope/lib/libnccl-net-railscope.so" "$base" || fail "base: railscope env missing"
grep -q "NCCL_PROFILER_PLUGIN: /opt/railscope/lib/libnccl-profiler-railscope.so" "$base" || fail "base: profiler env"
grep -q "NCCL_NET_PLUGIN_REF_COUNT: \"1\"" "$base" || fail "base: NCCL_NET_PLUGIN_REF_COUNT=1 missing"
grep -Eq "name: railscope-env-[a-z0-9]{10}" "$base" || fail "base: generated ConfigMap not hashed/referenced"
grep -q "claimName: railscope-profiles" "$base" || fail "base: no profile volume"
grep -q "image: registry.example.com/ml/pytorch-railscope:2.11.0-cu128-railscope0.1.0" "$base" || fail "base: image not set"
grep -q "nvidia.com/sriov_rdma_vf: 1" "$sriov" || fail "sriov: no VF request"
grep -q "hca_shared_devices_a" "$sriov" && fail "sriov: shared-HCA resource still requested"
grep -q "name: rdma-net$" "$sriov" && fail "sriov: macvlan NAD not removed"
grep -q "NCCL_IB_HCA: =mlx5_0:1$" "$base" || fail "base: NCCL_IB_HCA missing"
grep -q "NCCL_IB_ADDR_RANGE: 192.168.100.0/24" "$base" || fail "base: NCCL_IB_ADDR_RANGE missing"
grep -q "storageClassName: " "$base" || fail "base: the ReadWriteMany claim names no storage class"
grep -q "NCCL_IB_ADDR_RANGE: 192.168.101.0/24" "$sriov" || fail "sriov: NCCL_IB_ADDR_RANGE is not the SR-IOV network's"
# 8 rails: one network and one device per rail, every rail's HCA named, no shared HCA or macvlan left.
[ "$(grep -c "kind: NetworkAttachmentDefinition" "$rails8")" -eq 8 ] || fail "rails8: not 8 networks"
for r in 0 1 2 3 4 5 6 7; do
  [ "$(grep -c "rdma/rail$r: 1" "$rails8")" -eq 2 ] || fail "rails8: rail $r not requested (limits and requests)"
  # (the annotation is folded over lines in the render: compare with whitespace collapsed)
  tr '\n' ' ' < "$rails8" | tr -s ' ' | grep -q "\"name\": \"rail$r\", \"interface\": \"net$((r + 1))\"" \
    || fail "rails8: rail $r not attached as net$((r + 1))"
  grep -q "NCCL_IB_HCA: .*mlx5_$r:1" "$rails8" || fail "rails8: mlx5_$r missing from NCCL_IB_HCA"
done
grep -q "hca_shared_devices_a" "$rails8" && fail "rails8: shared-HCA resource still requested"
grep -q "name: rdma-net$" "$rails8" && fail "rails8: macvlan NAD of the base not removed"
grep -q "NCCL_IB_ADDR_RANGE: 10.100.0.0/16" "$rails8" || fail "rails8: NCCL_IB_ADDR_RANGE"
grep -q "namespace: railscope-system" "$doctor" || fail "doctor: namespace not applied"
grep -q "kind: DaemonSet" "$doctor" || fail "doctor: no DaemonSet"
grep -q 'nvidia.com/gpu.present: "true"' "$doctor" || fail "doctor: not limited to GPU nodes"

# 4. A broken set must be rejected, for the right reasons.
cat > "$WORK/bad.yaml" <<'BAD'
apiVersion: batch/v1
kind: Job
metadata:
  name: bad
spec:
  completions: two
  template:
    metadata:
      annotations:
        k8s.v1.cni.cncf.io/networks: '[{"name": "missing-net"}]'
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: pytorch:latest
          imagePullPolcy: Always
          envFrom:
            - configMapRef:
                name: no-such-config
          resources:
            limits:
              rdma/hca_shared_devices_a: 1
            requests:
              rdma/hca_shared_devices_a: 2
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: broken-net
spec:
  config: '{"cniVersion": "0.3.1", "name": "broken-net", "type": "macvlan", "mode": "bridge"}'
---
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
spec:
  rdmaSharedDevicePlugins:
    image: x
  rdmaSharedDevicePlugin:
    image: k8s-rdma-shared-dev-plugin
    config: '{"configList": [{"resourceName": "a", "rdmaHcaMax": 0, "selectors": {}}]}'
BAD
if node "$HERE/validate_k8s.js" "$TOOLS" "$WORK/bad.yaml" > "$WORK/bad.out"; then
  fail "a broken manifest set validated"
fi
for want in "/spec/completions must be integer" "unknown field .spec.template.spec.containers[0].imagePullPolcy" \
            "must carry an explicit tag other than latest" "configMap \"no-such-config\" is not in the render" \
            "Multus network \"missing-net\" has no NetworkAttachmentDefinition" \
            "limits == requests" "must have required property 'master'" \
            "must NOT have additional properties (nicclusterpolicy)" \
            "/configList/0/rdmaHcaMax must be >= 1 (rdma-shared-device-plugin-config)"; do
  grep -qF "$want" "$WORK/bad.out" || { cat "$WORK/bad.out"; fail "validator missed: $want"; }
done

# 4b. RDMA env, storage class and driver upgrades: the cross-checks catch each.
cat > "$WORK/bad2.yaml" <<'BAD'
apiVersion: v1
kind: ConfigMap
metadata:
  name: env-wrong-range
data:
  NCCL_IB_ADDR_RANGE: 192.168.0.0/24
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: rail-x
  annotations:
    k8s.v1.cni.cncf.io/resourceName: rdma/rail_x
spec:
  config: '{"cniVersion": "0.3.1", "name": "rail-x", "plugins": [{"type": "macvlan", "master": "ens1", "ipam": {"type": "whereabouts", "range": "10.100.3.0/24"}}]}'
---
apiVersion: batch/v1
kind: Job
metadata:
  name: job-x
spec:
  template:
    metadata:
      annotations:
        k8s.v1.cni.cncf.io/networks: '[{"name": "rail-x", "interface": "net1"}]'
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: pytorch:2.5.1
          envFrom:
            - configMapRef:
                name: env-wrong-range
          resources:
            limits:
              rdma/rail_x: 1
            requests:
              rdma/rail_x: 1
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shared
spec:
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
spec:
  ofedDriver:
    image: doca-driver
    repository: nvcr.io/nvidia/mellanox
    version: 25.04-0.6.1.0-2
    upgradePolicy:
      autoUpgrade: true
      drain:
        enable: true
        force: true
BAD
if node "$HERE/validate_k8s.js" "$TOOLS" "$WORK/bad2.yaml" > "$WORK/bad2.out"; then
  fail "a manifest set with the RDMA env, storage and upgrade problems validated"
fi
for want in "attaches RDMA networks but sets no NCCL_IB_HCA" \
            "network \"rail-x\" range 10.100.3.0/24 is outside NCCL_IB_ADDR_RANGE 192.168.0.0/24" \
            "ReadWriteMany without storageClassName" \
            "autoUpgrade without waitForCompletion.podSelector" "autoUpgrade with drain.force"; do
  grep -qF "$want" "$WORK/bad2.out" || { cat "$WORK/bad2.out"; fail "validator missed: $want"; }
done

# 5. The doctor loop: status metric, JSON log line, readiness file, for a failing and a healthy node.
mkdir -p "$WORK/bin" "$WORK/textfile" "$WORK/state"
cat > "$WORK/bin/railscope" <<'FAKE'
#!/bin/sh
[ "$1 $2" = "doctor --json" ] || exit 99
printf '{\n  "status": "%s",\n  "exit_code": %s\n}\n' "$FAKE_STATUS_WORD" "$FAKE_STATUS"
exit "$FAKE_STATUS"
FAKE
chmod +x "$WORK/bin/railscope"
run_loop() {  # status word -> runs one iteration of the loop (killed while it sleeps)
  set +e
  PATH="$WORK/bin:$PATH" FAKE_STATUS=$1 FAKE_STATUS_WORD=$2 NODE_NAME=gpu-node-7 INTERVAL_SECONDS=30 \
    TEXTFILE_DIR="$WORK/textfile" STATE_DIR="$WORK/state" timeout 2 sh "$K8S/doctor/doctor-loop.sh" > "$WORK/loop.log"
  set -e
}
run_loop 2 error
grep -q '^railscope_doctor_status{node="gpu-node-7"} 2$' "$WORK/textfile/railscope_doctor.prom" || fail "status metric"
grep -q '^railscope_doctor_last_run_timestamp_seconds{node="gpu-node-7"} [0-9]\+$' "$WORK/textfile/railscope_doctor.prom" \
  || fail "timestamp metric"
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); assert d["doctor_exit_status"]==2 and d["report"]["status"]=="error", d' \
  "$WORK/loop.log" || fail "log line is not the JSON report"
[ ! -e "$WORK/state/ready" ] || fail "ready despite doctor errors"
run_loop 0 ok
[ -e "$WORK/state/ready" ] || fail "not ready on a healthy node"
grep -q '} 0$' "$WORK/textfile/railscope_doctor.prom" || fail "status metric not updated"
echo "kubernetes manifests: ok"
