#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `railscope preflight` across the test bed's two "hosts" with --rails 2 (host A: rxe0 @ vethA0 and
# rxe2 @ vethA1; host B: rxe1 @ vethB0 and rxe3 @ vethB1), each rank given its host name and its ports
# (--host-name, NCCL_IB_HCA), started by a real launcher. Runs in the guest.
#   preflight_case.sh RAILSCOPE CASE...   (several: one after the other in this boot, each in its own
#                                          process and folder $TESTBED_SCRATCH/CASE; exit 1 if any failed)
#     mpirun_healthy  both rails carry ib_write_bw at once; then Open MPI's mpirun (MPMD, one rank per
#                     "host"): exit 0, no finding, 4 links measured with both ends' counter deltas, every
#                     rank prints its line
#     torchrun_tbf    RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT; a tbf rate limit on vethB1: link.slow
#                     names rail 1 and the pair and what both ends' counters showed, rail 0 is clean,
#                     exit 2; --html: a heat map per rail
#     mtu_missing     vethB1 at MTU 9000 (rxe3 4096 vs rxe2 1024) and a third rank that never starts:
#                     preflight.rail_mtu names hostB/rxe3:1, preflight.node_missing names rank 2, exit 2
#     slurm_healthy   a private one-node Slurm cluster (slurm_cluster.sh) and `srun -N1 -n2 --multi-prog`:
#                     rank, world and rank 0's host from Slurm's environment (no launcher flag), text
#                     report: exit 0, no finding, 4 links measured, every rank prints its line
# Every case runs with the job's secret, as a cluster should: mpirun passes --token-file (mode 600),
# torchrun-style ranks RAILSCOPE_PREFLIGHT_TOKEN in their environment, srun none (MUNGE vouches).
set -u
. "$TESTBED_LIB"
CLI=$1
if (( $# > 2 )); then
    rc=0
    for c in "${@:2}"; do
        t=$EPOCHREALTIME
        bash "${BASH_SOURCE[0]}" "$CLI" "$c" || rc=1
        printf 'preflight %s: %d ms\n' "$c" $(( (${EPOCHREALTIME/./} - ${t/./}) / 1000 ))
    done
    exit $rc
fi
CASE=$2
OUT=$TESTBED_SCRATCH/$CASE
mkdir -p "$OUT"
FAILS=0
ok() { printf 'ok   %s\n' "$*"; }
bad() { printf 'FAIL %s\n' "$*"; FAILS=$((FAILS + 1)); }
expect() { if eval "$1"; then ok "$2"; else bad "$2"; fi; }
jq_py() { python3 -c "import json,sys; v=json.load(open('$OUT/verdict.json')); $1"; }
# The --html page of the tbf case: one heat map per rail with a cell per measured link (2 per rail),
# rail 1's slow link outlined, none on rail 0.
html_two_rails() {
    python3 - "$OUT/preflight.html" <<'PY'
import sys
h = open(sys.argv[1]).read()
maps = [h[h.index('data-rail="%d"' % r):] for r in (0, 1)]
maps = [m[:m.index('</svg>')] for m in maps]
ok = (h.count('class="rail-heatmap"') == 2 and [m.count('<rect class="cell') for m in maps] == [2, 2]
      and 'cell slow' not in maps[0] and 'cell slow' in maps[1])
sys.exit(0 if ok else 1)
PY
}

# Soft-RoCE under TCG on a loaded 2-core host moved 10-93 MB/s per healthy link in one run (links of a
# step run at once and share the guest's two vCPUs), and the reported rate (10 Gb/s) means nothing here:
# links are judged against a floor of 1 MB/s (10 % of 0.01 GB/s) and 5 % of the median; the tbf case
# limits one rail to 1 Mbit/s (0.125 MB/s). netbench sleeps when idle (--link-poll sleep), leaving the
# CPU to rxe.
LINKS=(--link-size 32768 --link-bytes 1048576 --link-timeout 60 --line-rate-GBps 0.01 --min-line-percent 10
       --slow-fraction 0.05 --link-poll sleep)
A=(--host-name hostA) B=(--host-name hostB)
# The job's secret; its file on the guest's tmpfs (the 9p scratch folder need not keep a file's owner
# and mode, which preflight checks).
TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
TOKEN_FILE=/run/railscope-preflight-$CASE.token
(umask 077 && printf '%s\n' "$TOKEN" > "$TOKEN_FILE")
HCA_A="=rxe0,rxe2" HCA_B="=rxe1,rxe3"

case $CASE in
mpirun_healthy)
    # rdma_rxe carries traffic on both rails at once.
    tb_gid_index_v4 rxe1 g1; tb_gid_index_v4 rxe3 g3; tb_gid_index_v4 rxe0 g0; tb_gid_index_v4 rxe2 g2
    timeout 60 ib_write_bw -d rxe1 -x "$g1" -F -p 18515 -s 65536 -n 200 > "$OUT/s0.log" 2>&1 &
    timeout 60 ib_write_bw -d rxe3 -x "$g3" -F -p 18516 -s 65536 -n 200 > "$OUT/s1.log" 2>&1 &
    tb_wait_tcp_listen 18515; tb_wait_tcp_listen 18516
    timeout 60 ib_write_bw -d rxe0 -x "$g0" -F -p 18515 -s 65536 -n 200 10.0.0.2 > "$OUT/c0.log" 2>&1 &
    c0=$!
    timeout 60 ib_write_bw -d rxe2 -x "$g2" -F -p 18516 -s 65536 -n 200 10.0.1.2 > "$OUT/c1.log" 2>&1
    rc_c1=$?
    wait "$c0"
    rc_c0=$?
    wait
    # perftest's own clock reads 0 MB/s under TCG; 200 writes of 64 KiB completed on each rail is the proof.
    expect "[[ $rc_c0 == 0 ]] && grep -Eq '^ *65536 +200 ' '$OUT/c0.log'" "rail 0 carries ib_write_bw while rail 1 does"
    expect "[[ $rc_c1 == 0 ]] && grep -Eq '^ *65536 +200 ' '$OUT/c1.log'" "rail 1 carries ib_write_bw while rail 0 does"
    # Each rank's output in its own file (mpirun --output-filename DIR: DIR/1/rank.N/stdout).
    timeout 240 mpirun --allow-run-as-root --oversubscribe --output-filename "$OUT/mpi" \
        -np 1 -x NCCL_IB_HCA="$HCA_A" "$CLI" preflight "${A[@]}" --rendezvous 127.0.0.1:29555 --token-file "$TOKEN_FILE" --json "${LINKS[@]}" : \
        -np 1 -x NCCL_IB_HCA="$HCA_B" "$CLI" preflight "${B[@]}" --rendezvous 127.0.0.1:29555 --token-file "$TOKEN_FILE" "${LINKS[@]}" \
        > "$OUT/mpirun.out" 2> "$OUT/mpirun.err"
    rc=$?
    cp "$OUT/mpi/1/rank.0/stdout" "$OUT/verdict.json"
    expect "[[ $rc == 0 ]]" "mpirun: exit 0 (got $rc)"
    expect "jq_py 'sys.exit(0 if v[\"launcher\"] == \"openmpi\" and v[\"joined\"] == 2 and v[\"authenticated\"] else 1)'" "launcher openmpi, 2 joined, authenticated"
    expect "jq_py 'sys.exit(0 if v[\"findings\"] == [] else 1)'" "healthy: no finding"
    expect "jq_py 'sys.exit(0 if len(v[\"links\"]) == 4 and all(l[\"gbs\"] and l[\"gbs\"] > 0 for l in v[\"links\"]) else 1)'" "4 links measured"
    expect "jq_py 'sys.exit(0 if [n[\"nics\"][1][\"device\"] for n in v[\"nodes\"]] == [\"rxe2\", \"rxe3\"] else 1)'" "rail 1 is rxe2 / rxe3"
    expect "jq_py 'sys.exit(0 if all(l[\"counters\"][e] and l[\"counters\"][e][\"readable\"] and l[\"counters\"][e][\"moved\"].get(\"traffic\", 0) > 0 for l in v[\"links\"] for e in (\"from\", \"to\")) else 1)'" "each link carries both ends' counter deltas (rxe's traffic moved)"
    expect "grep -q '^railscope preflight: rank 1 (hostB): cluster ok (exit 0)' '$OUT/mpi/1/rank.1/stdout'" "rank 1 prints its line"
    ;;
torchrun_tbf)
    # 1 Mbit/s out of host B on rail 1; a queue of 10 s (1.25 MB) holds what netbench keeps in flight, so
    # nothing is dropped (rxe retransmits dropped packets only after its ACK timeout).
    tc qdisc add dev vethB1 root tbf rate 1mbit burst 32kb latency 10s || bad "tc qdisc add"
    env RAILSCOPE_PREFLIGHT_TOKEN="$TOKEN" RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29600 NCCL_IB_HCA="$HCA_B" \
        timeout 240 "$CLI" preflight "${B[@]}" "${LINKS[@]}" > "$OUT/rank1.out" 2>&1 &
    env RAILSCOPE_PREFLIGHT_TOKEN="$TOKEN" RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29600 NCCL_IB_HCA="$HCA_A" \
        timeout 240 "$CLI" preflight "${A[@]}" --json --html "$OUT/preflight.html" "${LINKS[@]}" > "$OUT/verdict.json" 2> "$OUT/rank0.err"
    rc=$?
    wait
    expect "[[ $rc == 2 ]]" "tbf: exit 2 (got $rc)"
    expect "jq_py 'sys.exit(0 if v[\"launcher\"] == \"torchrun\" and v[\"authenticated\"] else 1)'" "launcher torchrun, authenticated"
    expect "jq_py 's=[f for f in v[\"findings\"] if f[\"id\"]==\"link.slow\"]; print(s); sys.exit(0 if s and all(\"rail 1\" in f[\"detail\"] and \"hostB/rxe3:1\" in f[\"detail\"] and \"hostA/rxe2:1\" in f[\"detail\"] for f in s) else 1)'" "link.slow names rail 1, hostA/rxe2 and hostB/rxe3"
    expect "jq_py 'sys.exit(0 if not [f for f in v[\"findings\"] if \"rxe0\" in f[\"detail\"] or \"rxe1\" in f[\"detail\"]] else 1)'" "rail 0 is clean"
    expect "jq_py 'sys.exit(0 if all(f[\"id\"]==\"link.slow\" for f in v[\"findings\"]) else 1)'" "no other finding"
    expect "grep -q '\[link.slow\]' '$OUT/rank1.out'" "rank 1's line carries link.slow"
    # Each link.slow says what both ends' rxe counters showed. tbf queues, it does not drop, so they are
    # expected clean; but rxe under TCG on a loaded host can time out an ACK now and then (4 in 3 s seen,
    # commit c123693), 2 loss events each, which over an 8 s test can reach the loss threshold: only the
    # note's presence is asserted, its text is printed.
    expect "jq_py 's=[f[\"detail\"] for f in v[\"findings\"] if f[\"id\"]==\"link.slow\"]; print([d[d.find(\"; counters\"):] for d in s]); sys.exit(0 if s and all(\"; counters clean on both ends\" in d or \"; counters: \" in d for d in s) else 1)'" "link.slow: says what both ends' counters showed"
    # The HTML page: a heat map per rail, a cell per measured link (2 per rail), the slow ones outlined.
    expect "html_two_rails" "--html: a heat map per rail, 2 cells each, rail 1's slow link outlined"
    ;;
mtu_missing)
    tb_set_mtu vethB1 9000
    for (( i = 0; i < 100; i++ )); do tb_active_mtu rxe3 m; [[ $m == 4096 ]] && break; tb_sleep 0.1; done
    env RAILSCOPE_PREFLIGHT_TOKEN="$TOKEN" RANK=1 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29601 NCCL_IB_HCA="$HCA_B" \
        timeout 120 "$CLI" preflight "${B[@]}" --timeout 10 --no-links > "$OUT/rank1.out" 2>&1 &
    env RAILSCOPE_PREFLIGHT_TOKEN="$TOKEN" RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29601 NCCL_IB_HCA="$HCA_A" \
        timeout 120 "$CLI" preflight "${A[@]}" --timeout 10 --no-links --json > "$OUT/verdict.json" 2> "$OUT/rank0.err"
    rc=$?
    wait $!
    rc1=$?
    expect "[[ $rc == 2 && $rc1 == 2 ]]" "exit 2 at rank 0 and rank 1 (got $rc, $rc1)"
    expect "jq_py 's=[f for f in v[\"findings\"] if f[\"id\"]==\"preflight.rail_mtu\"]; print(s); sys.exit(0 if len(s)==1 and \"hostB/rxe3:1 4096\" in s[0][\"detail\"] and \"rail 1\" in s[0][\"detail\"] else 1)'" "preflight.rail_mtu names hostB/rxe3:1 (4096)"
    expect "jq_py 's=[f for f in v[\"findings\"] if f[\"id\"]==\"preflight.node_missing\"]; sys.exit(0 if len(s)==1 and \"rank 2 of 3\" in s[0][\"detail\"] else 1)'" "rank 2 named missing"
    expect "jq_py 'sys.exit(0 if v[\"joined\"] == 2 and v[\"missing\"] == [2] else 1)'" "the two others reported"
    expect "jq_py 'sys.exit(0 if any(f[\"id\"]==\"mtu.mismatch\" and f[\"detail\"].startswith(\"hostB: \") for f in v[\"findings\"]) else 1)'" "hostB's own doctor finding named by host"
    ;;
slurm_healthy)
    # slurmd needs the cgroup2 file system that the guest mounts (tests/testbed/guest/init); every file
    # of the cluster lives on the guest's tmpfs. The node is "localhost": SLURM_STEP_NODELIST names it,
    # and the ranks resolve it to find rank 0 (the guest's own hostname does not resolve).
    # shellcheck source=tests/testbed/preflight/slurm_cluster.sh
    . "$(dirname "${BASH_SOURCE[0]}")/slurm_cluster.sh"
    t0=$EPOCHREALTIME
    slurm_start /run/railscope-slurm localhost 60
    up=$?
    t1=$EPOCHREALTIME
    expect "[[ $up == 0 ]]" "munged, slurmctld and slurmd up, node idle ($(( (${t1/./} - ${t0/./}) / 1000 )) ms)"
    if (( up == 0 )); then
        # One line per task (srun --multi-prog, https://slurm.schedmd.com/multi_prog.html): its host name
        # and ports; rank, world size and rank 0's address come from srun (SLURM_PROCID, SLURM_NTASKS,
        # SLURM_STEP_NODELIST), so no --rank, --world-size or --rendezvous.
        printf '%s\n' "0 env NCCL_IB_HCA=$HCA_A $CLI preflight ${A[*]} ${LINKS[*]}" \
                       "1 env NCCL_IB_HCA=$HCA_B $CLI preflight ${B[*]} ${LINKS[*]}" > /run/railscope-slurm/tasks.conf
        # No token: under Slurm the ranks authenticate with MUNGE, through the cluster's munged (its
        # socket is private to this cluster, so named; srun hands every task its environment).
        env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u PMI_RANK -u OMPI_COMM_WORLD_RANK \
            -u RAILSCOPE_PREFLIGHT_TOKEN RAILSCOPE_MUNGE_SOCKET=/run/railscope-slurm/munge/munge.socket \
            timeout 240 srun -N1 -n2 --output "$OUT/rank%t.out" --error "$OUT/rank%t.err" \
            --multi-prog /run/railscope-slurm/tasks.conf > "$OUT/srun.out" 2> "$OUT/srun.err"
        rc=$?
        t2=$EPOCHREALTIME
        expect "[[ $rc == 0 ]]" "srun: exit 0 (got $rc, $(( (${t2/./} - ${t1/./}) / 1000 )) ms)"
        r0=$OUT/rank0.out
        expect "grep -q '^railscope preflight — 2 of 2 rank(s) joined (slurm), 2 rail(s)$' '$r0'" "launcher slurm, 2 joined, authenticated"
        expect "! grep -q 'no job secret' '$OUT/rank0.err' '$OUT/rank1.err'" "MUNGE vouched for both ranks (no 'no job secret' line)"
        expect "grep -Eq '^  rank +0 hostA +doctor ok  rxe0:1 ACTIVE .*, rxe2:1 ACTIVE ' '$r0' && grep -Eq '^  rank +1 hostB +doctor ok  rxe1:1 ACTIVE .*, rxe3:1 ACTIVE ' '$r0'" "rank 0 lists both ranks with their rails"
        expect "grep -q '^Links (4 measured)$' '$r0' && [[ \$(grep -Ec '^  rail [01]: 2 link\(s\), median [0-9.e+-]+ GB/s' '$r0') == 2 ]]" "4 links measured, 2 per rail"
        expect "grep -q '^Findings (0)$' '$r0'" "healthy: no finding"
        expect "grep -q '^Status: ok (exit 0)$' '$r0'" "rank 0: status ok (exit 0)"
        expect "grep -q '^railscope preflight: rank 1 (hostB): cluster ok (exit 0), 0 finding(s), 2 of 2 rank(s) joined' '$OUT/rank1.out'" "rank 1 prints its line"
        (( FAILS )) && slurm_logs
    fi
    t3=$EPOCHREALTIME
    slurm_stop
    printf 'slurm daemons stopped in %d ms\n' $(( (${EPOCHREALTIME/./} - ${t3/./}) / 1000 ))
    ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
if (( FAILS )); then
    for f in "$OUT"/*.out "$OUT"/*.err "$OUT"/verdict.json; do [[ -s $f ]] && { echo "--- $f"; tail -n 60 "$f"; }; done
    exit 1
fi
echo "preflight $CASE: all passed"
