#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real job for `railscope ab` in the soft-RoCE test bed (no GPU, so no NCCL): it moves data over
# rxe1 -> rxe0 with the transport the environment selects and writes the measured bandwidth as
# profile records (docs/profile-format.md), one file per "rank", as the profiler would.
#   NCCL_NET=railscope: `railscope netbench --pair rxe0,rxe1` through the net plugin NCCL_NET_PLUGIN
#                       names (an absolute path; otherwise netbench's default, railscope's plugin)
#   NCCL_NET=IB:        perftest ib_write_bw (RDMA WRITE, as NCCL's built-in IB transport posts),
#                       standing in for NCCL's IB transport, which cannot run without NCCL and a GPU
# usage: ab_netbench_job.sh RAILSCOPE_CLI SIZE...      (sizes in bytes)
set -uo pipefail
RS=$1; shift
SIZES=("$@")
PY=/usr/bin/python3
out=${RAILSCOPE_PROFILE_DIR:?RAILSCOPE_PROFILE_DIR not set}
[[ -d $out ]] || { echo "job: $out is not a folder" >&2; exit 9; }
[[ -n ${NCCL_PROFILER_PLUGIN:-} && ${NCCL_PROFILER_PLUGIN} != none ]] || { echo "job: no profiler" >&2; exit 9; }
. "$TESTBED_LIB"
results=$(mktemp)

case ${NCCL_NET:-} in
railscope)
    plugin=()
    [[ ${NCCL_NET_PLUGIN:-} == /* ]] && plugin=(--plugin "$NCCL_NET_PLUGIN")
    for size in "${SIZES[@]}"; do
        json=$(timeout 300 "$RS" netbench --pair rxe0,rxe1 "${plugin[@]}" --mode bw --min-size "$size" \
                 --max-size "$size" --iters 64 --warmup 4 --bytes-per-size 8388608 --no-verify --json --timeout 60) \
            || { echo "job: netbench failed for $size" >&2; exit 3; }
        "$PY" -c 'import json,sys; r=json.loads(sys.argv[1])["results"][0]; print(r["size"], r["gbs"])' "$json" >> "$results"
    done
    ;;
IB)
    tb_gid_index_v4 rxe0 g0
    tb_gid_index_v4 rxe1 g1
    port=18600
    for size in "${SIZES[@]}"; do
        # Under TCG perftest now and then reports an average of 0.00 MB/sec (its clock sampling); such a
        # run measured nothing, so it is repeated (at most 3 tries) rather than recorded.
        mib=
        for attempt in 1 2 3; do
            port=$((port + 1))
            timeout 120 ib_write_bw -d rxe0 -x "$g0" -s "$size" -n 64 -F -p $port > /dev/null 2>&1 &
            spid=$!
            tb_wait_tcp_listen $port 30
            txt=$(timeout 120 ib_write_bw -d rxe1 -x "$g1" -s "$size" -n 64 -F -p $port 10.0.0.1 2>&1) \
                || { echo "job: ib_write_bw failed for $size: $txt" >&2; exit 3; }
            wait $spid
            # The result line: bytes iterations BW-peak BW-average MsgRate (MB/sec = MiB/s).
            mib=$(echo "$txt" | awk -v s="$size" '$1 == s && NF >= 4 { print $4 }' | tail -1)
            [[ -n $mib ]] || { echo "job: no ib_write_bw result for $size: $txt" >&2; exit 3; }
            [[ $mib != 0 && $mib != 0.00 ]] && break
            echo "job: ib_write_bw reported 0 MB/sec for $size (try $attempt)" >&2
            mib=
        done
        [[ -n $mib ]] || { echo "job: ib_write_bw measured nothing for $size in 3 tries" >&2; exit 3; }
        echo "$size $("$PY" -c "print($mib * 1048576 / 1e9)")" >> "$results"
    done
    ;;
*)
    echo "job: unexpected NCCL_NET='${NCCL_NET:-}'" >&2; exit 9
    ;;
esac

# One file per simulated rank (2 ranks: the two ends of the pair); bandwidth as busbw of a Send.
"$PY" - "$results" "$out" "${RAILSCOPE_PROFILE_TAG:-}" "${NCCL_NET}" <<'PY'
import json, os, socket, sys
results, out, tag, net = sys.argv[1:5]
rows = [line.split() for line in open(results) if line.strip()]
for rank in range(2):
    pid = os.getpid() * 10 + rank
    with open(os.path.join(out, f"{socket.gethostname()}-{pid}.jsonl"), "w") as f:
        f.write(json.dumps({"type": "header", "schema": "railscope.profile", "version": 1,
                            "hostname": socket.gethostname(), "pid": pid, "tag": tag, "net": net}) + "\n")
        for seq, (size, gbs) in enumerate(rows):
            size, gbs = int(size), float(gbs)
            f.write(json.dumps({"type": "p2p", "rank": rank, "nranks": 2, "seq": seq,
                                "op": "Send" if rank == 1 else "Recv", "bytes": size,
                                "time_us": size / (gbs * 1e3), "timing": "cpu_proxy",
                                "algbw_gbs": gbs, "busbw_gbs": gbs, "complete": True}) + "\n")
print(f"job: {net}: " + ", ".join(f"{r[0]} B {float(r[1]):.4f} GB/s" for r in rows))
PY
