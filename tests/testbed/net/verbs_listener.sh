# SPDX-License-Identifier: Apache-2.0
# Sourced by the listener cases: starts `NET_TRANSFER server` in the background (log in
# $TESTBED_SCRATCH/server.log) and reads its verbs listen handle. Sets server (its pid), handle (the
# handle file), addr, port.
# The verbs listen handle: port at bytes 10..11 (little-endian), IPv4 address at 12..15.
start_server() {
  local bin=$1
  handle="$TESTBED_SCRATCH/net.handle"
  rm -f "$handle"
  timeout 150 "$bin" server "$handle" > "$TESTBED_SCRATCH/server.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do [ -s "$handle" ] && break; sleep 0.1; done
  [ -s "$handle" ] || { echo "FAIL: no handle file"; cat "$TESTBED_SCRATCH/server.log"; exit 1; }
  local p0 p1 a0 a1 a2 a3
  read -r p0 p1 < <(od -An -tu1 -j10 -N2 "$handle")
  read -r a0 a1 a2 a3 < <(od -An -tu1 -j12 -N4 "$handle")
  addr="$a0.$a1.$a2.$a3" port=$((p0 + 256 * p1))
  echo "listener at $addr:$port"
}
