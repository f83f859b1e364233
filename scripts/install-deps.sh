#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian 12 package railscope needs to build, test and run its soft-RoCE test bed.
# Idempotent; used by the README quick start and by .ci/run. Must run as root (or with sudo available).
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config clang-format
  libibverbs-dev rdma-core ibverbs-providers ibverbs-utils librdmacm-dev
  libhwloc-dev hwloc
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
  libsimdjson-dev  # `railscope report` reads the collective records of large jobs with it
  libssl-dev  # libcrypto: HMAC-SHA256 of `railscope preflight`'s frames (the CLI only, not the plugins)
  libmunge-dev  # munge.h: `railscope preflight` authenticated by MUNGE under Slurm (libmunge is dlopened)
  valgrind python3
  chromium  # headless check of `railscope report --html` pages (tests/abi/profiler)
  prometheus  # promtool (textfiles, deploy/prometheus's rules) and the server of the monitoring end-to-end test
  prometheus-node-exporter  # its textfile collector reads the textfiles in the monitoring end-to-end test
  python3-yaml  # tests/unit/deploy/prometheus: every rule of deploy/prometheus has a promtool unit test
  # scripts/fuzz.sh: clang 14 and its runtimes (libFuzzer, ASan, UBSan: libclang-rt-14-dev, only
  # recommended by clang-14's libclang-common-14-dev, so not installed without it)
  clang libclang-rt-14-dev
  dpkg-dev  # tests/install: `cpack -G DEB` runs dpkg-shlibdeps for the .deb's Depends, dpkg-deb lists it
  help2man  # the CLI's manual pages, generated from its --help (cmake/man-pages.sh)
  lintian  # tests/install: the .deb is checked with lintian (install.deb_lintian)
)
# The QEMU/TCG soft-RoCE test bed (tests/testbed/).
TESTBED_PKGS=(
  qemu-system-x86 busybox-static kmod cpio xz-utils zstd iproute2 perftest iperf3 util-linux procps
)
TESTBED_PKGS+=(openmpi-bin)  # `mpirun` starting railscope preflight in the test bed (tests/testbed/preflight)
# A real Slurm `srun` starting railscope preflight in the test bed (tests/testbed/preflight, slurm_healthy):
# munged, slurmctld and slurmd run inside the guest from a private configuration on its tmpfs.
TESTBED_PKGS+=(slurmd slurmctld slurm-client munge)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${BUILD_PKGS[@]}" "${TESTBED_PKGS[@]}" ${RAILSCOPE_EXTRA_PKGS:-}; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
