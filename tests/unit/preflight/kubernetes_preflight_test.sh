#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/kubernetes/preflight renders (`kubectl kustomize`), validates like the other manifests
# (tests/unit/deploy/validate_k8s.js, with deploy/kubernetes/base's RDMA network it attaches), and its
# pieces agree: Indexed Job, subdomain = headless service, service selects the Job's pods, one rendezvous
# port, --world-size = completions = parallelism. A copy with --world-size off by one must be caught.
set -euo pipefail
ROOT=$1
TOOLS=$2
KUBECTL="$TOOLS/bin/kubectl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$KUBECTL" kustomize "$ROOT/deploy/kubernetes/preflight" > "$WORK/preflight.yaml" || fail "kubectl kustomize preflight"
"$KUBECTL" kustomize "$ROOT/deploy/kubernetes/base" > "$WORK/base.yaml" || fail "kubectl kustomize base"
node "$ROOT/tests/unit/deploy/validate_k8s.js" "$TOOLS" "$WORK/base.yaml" "$WORK/preflight.yaml" ||
  fail "preflight manifests do not validate"

check_agreement() {  # $1 = rendered file; prints the first disagreement, exit 1
  local f=$1 completions parallelism world service
  grep -q "completionMode: Indexed" "$f" || { echo "not an Indexed Job"; return 1; }
  completions=$(sed -n 's/^ *completions: \([0-9]*\)$/\1/p' "$f")
  parallelism=$(sed -n 's/^ *parallelism: \([0-9]*\)$/\1/p' "$f")
  world=$(sed -n 's/^ *- --world-size=\([0-9]*\)$/\1/p' "$f")
  [ -n "$completions" ] && [ "$completions" = "$parallelism" ] && [ "$completions" = "$world" ] ||
    { echo "completions $completions, parallelism $parallelism, --world-size $world differ"; return 1; }
  service=$(sed -n 's/^ *- --k8s-service=\(.*\)$/\1/p' "$f")
  grep -q "^ *subdomain: $service$" "$f" || { echo "subdomain is not the service $service"; return 1; }
  grep -q "^  name: $service$" "$f" && grep -q "clusterIP: None" "$f" || { echo "no headless service $service"; return 1; }
  grep -q "publishNotReadyAddresses: true" "$f" || { echo "service does not publish unready pods"; return 1; }
  grep -q "job-name: railscope-preflight" "$f" || { echo "service does not select the Job's pods"; return 1; }
  [ "$(grep -c '29555' "$f")" -ge 3 ] || { echo "rendezvous port 29555 not on service and container"; return 1; }
  grep -q "rdma/hca_shared_devices_a: 1" "$f" && grep -q -- "- IPC_LOCK" "$f" || { echo "no RDMA devices / IPC_LOCK"; return 1; }
  # The job's secret: a Secret volume of mode 0400 (preflight refuses one others can read) at the path
  # --token-file names.
  local token_dir
  token_dir=$(sed -n 's|^ *- --token-file=\(.*\)/token$|\1|p' "$f")
  [ -n "$token_dir" ] && grep -q "mountPath: $token_dir$" "$f" || { echo "--token-file is not in a mounted volume"; return 1; }
  grep -q "secretName: railscope-preflight-token" "$f" && grep -Eq "defaultMode: (0400|256)$" "$f" ||
    { echo "no Secret volume of mode 0400 for the job's token"; return 1; }
  return 0
}
check_agreement "$WORK/preflight.yaml" || fail "preflight render: $(check_agreement "$WORK/preflight.yaml")"
sed 's/--world-size=4/--world-size=5/' "$WORK/preflight.yaml" > "$WORK/bad.yaml"
if check_agreement "$WORK/bad.yaml" > "$WORK/bad.out"; then fail "a --world-size that differs from completions passed"; fi
grep -q "differ" "$WORK/bad.out" || fail "bad render rejected for the wrong reason: $(cat "$WORK/bad.out")"
sed 's/defaultMode: .*/defaultMode: 420/' "$WORK/preflight.yaml" > "$WORK/open.yaml"
if check_agreement "$WORK/open.yaml" > "$WORK/open.out"; then fail "a token volume of mode 0644 passed"; fi
grep -q "mode 0400" "$WORK/open.out" || fail "open token rejected for the wrong reason: $(cat "$WORK/open.out")"
echo "deploy/kubernetes/preflight: ok"
