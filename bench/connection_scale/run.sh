#!/usr/bin/env bash
# bench/connection_scale: per-connection cost of a rank with N peers (N = 1, 8, 64, 256, 1,024 by
# default), railscope's net plugin and, when REF_PLUGIN names one, a reference net plugin (NCCL's IB
# code, e.g. built from Mellanox/nccl-rdma-sharp-plugins outside this repository) the same way, in one
# soft-RoCE test-bed boot. Prints one table per plugin (conn_scale.cpp says what each column is).
# Not a test: TCG numbers mean something only side by side within one boot (docs/testbed.md).
# usage: bench/connection_scale/run.sh [BUILD_DIR] [COUNTS]
#        env: REF_PLUGIN=<path> MEM=10G RAILSCOPE_NET_EAGER_MAX=<bytes, 0: receiver-driven>
#             BASE_PLUGIN=<another railscope .so, e.g. main's: before/after in one boot>
#             ROUNDS=<n> (each plugin n times in rotated order after a discarded warm-up; medians
#             at the end: connect time scatters by 30 % between runs of one boot, and the first run
#             of a boot was the slowest, which had made railscope's connect look 2x the reference's)
#             CONN_SCALE_SMAPS=1 (also resident memory per pair by kind of mapping, /proc/self/smaps)
#             RAILSCOPE_TESTBED_APPEND (guest kernel arguments; default: the TSC clock)
#
# One boot, both plugins (2026-12-02 07:25-07:31 UTC, 2-core host shared with other helpers, load
# average 5.4 at the start, 9.7 during N = 256/1,024; 10 GiB guest; per connection pair = one send +
# one receive comm; the command: REF_PLUGIN=/path/libnccl-net-ref.so MEM=10G run.sh build):
# railscope (before):
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
#      1      624.0     3616.0   2.00   2.00   4.00   3.00    607.211     31.533       751     3758.7
#      8      624.0     3715.5   2.00   2.00   4.00   3.00    110.666     22.184      1033     3909.2
#     64      624.0     3781.9   2.00   2.00   4.00   3.00    125.311     19.871      1028      447.9
#    256      624.0     3700.4   2.00   2.00   4.00   3.00    113.740      8.360       476      280.9
#   1024      624.0     3701.7   2.00   2.00   4.00   3.00     82.134      5.488       448       72.1
# reference (NCCL's IB code from Mellanox/nccl-rdma-sharp-plugins, NCCL_IB_GID_INDEX=1):
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
#      1       88.0      920.0   2.00   2.00   4.00   3.00     66.895      4.959       184      156.6
#      8       88.0       98.5   2.00   2.00   4.00   3.00     19.022      1.454       354      171.8
#     64       88.0      107.2   2.00   2.00   4.00   3.00     23.054      1.826       185      103.0
#    256       88.0      114.5   2.00   2.00   4.00   3.00      6.152      3.146       285      149.7
#   1024       88.0      213.4   2.00   2.00   4.00   3.00      5.913      1.137       160      101.5
# After the queue sizing (plugin/net/verbs/eager_queues.h), one boot, both plugins (2026-12-02 about
# 07:40-07:46 UTC, load average 7.5 rising to 15: a build and other helpers' guests ran alongside):
# railscope:
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
#      1      624.0     1336.0   2.00   2.00   4.00   3.00    295.865     56.687      1985     4004.1
#      8      624.0      839.0   2.00   2.00   4.00   3.00    139.373      1.587       847     4015.1
#     64      624.0      853.2   2.00   2.00   4.00   3.00     58.645      2.072      2339      144.8
#    256      624.0      767.0   2.00   2.00   4.00   3.00     52.023     14.357       877     3989.1
#   1024      624.0      768.9   2.00   2.00   4.00   3.00     42.481      3.333       395      942.7
# reference:
#      1       88.0      924.0   2.00   2.00   4.00   3.00     42.552      4.689       177      315.6
#      8       88.0      127.5   2.00   2.00   4.00   3.00     85.665     17.878       482     6069.0
#     64       88.0      107.2   2.00   2.00   4.00   3.00     31.914      2.743       881     3981.1
#    256       88.0       93.8   2.00   2.00   4.00   3.00     26.636      4.504       213     3985.3
#   1024       88.0      252.6   2.00   2.00   4.00   3.00     18.783      2.802       170      296.2
# Same code, guest clock on the TSC (now the default), quiet host (load average 2.2), 2026-12-02 08:36 UTC:
# railscope:
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
#      1      624.0     1240.0   2.00   2.00   4.00   3.00     68.577      8.010       353       37.0
#      8      624.0      837.0   2.00   2.00   4.00   3.00     12.868      1.679       358       52.4
#     64      624.0      857.5   2.00   2.00   4.00   3.00     13.778      1.932       345       63.7
#   1024      624.0      903.7   2.00   2.00   4.00   3.00     13.738      1.173       331       91.2
# reference:
#      1       88.0      840.0   2.00   2.00   4.00   3.00     20.965      3.205       166       67.7
#      8       88.0       99.0   2.00   2.00   4.00   3.00      9.752      1.138       172       76.5
#     64       88.0      107.2   2.00   2.00   4.00   3.00      5.186      1.041       174      101.9
#   1024       88.0      240.8   2.00   2.00   4.00   3.00      5.104      1.769       173       72.8
# RAILSCOPE_NET_EAGER_MAX=0 (receiver-driven; the reference's rows above apply), TSC, 08:48 UTC:
#      1       72.0      740.0   2.00   2.00   4.00   3.00     63.995      9.735       384      149.6
#      8       72.0     2682.0   2.00   2.00   4.00   3.00     24.205      2.582       330      105.7
#     64       72.0     2776.7   2.00   2.00   4.00   3.00     25.786      2.431       317      143.5
#   1024       72.0     2829.9   2.00   2.00   4.00   3.00     31.376      3.794       321       76.2
# (pinned below the reference; resident is its queues, still sized for the worst case: 4096 CQ entries)
# Receiver-driven queues bounded (plugin/net/verbs/receiver_driven_queues.h), one boot, this code as
# "railscope" and main's plugin (2890224) as the "reference" rows, 2026-12-02 11:24 UTC, load ~10:
# RAILSCOPE_NET_EAGER_MAX=0 REF_PLUGIN=build-before/build/plugin/net/libnccl-net-railscope.so MEM=4G \
#     bench/connection_scale/run.sh build 8,64
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
# now  8       40.0      281.5   2.00   2.00   4.00   3.00     41.405      2.444       272      173.0
#     64       40.0      256.3   2.00   2.00   4.00   3.00     17.373      2.547       629       85.5
# main 8       72.0     2407.5   2.00   2.00   4.00   3.00     57.865      4.904       592      164.2
#     64       72.0     2758.6   2.00   2.00   4.00   3.00     42.518      6.904       324      187.9
# Resident memory per pair 3.7 -> 0.77 MiB, flat in N, and connect time per pair about halved; what
# is left above the reference is the eager ring (pinned 624 KiB against 88 KiB, and it is resident
# too; RAILSCOPE_NET_EAGER_MAX bounds it, docs/net-protocol.md). Latency and test() in the second boot
# are noise from the load (the reference's own 8-byte figure went from 0.1-0.2 ms to 0.3-6 ms).
# Before, N = 1,024 needed the 10 GiB guest (two processes x 1,024 pairs x 3.7 MiB resident = 7.4 GiB;
# 4 GiB ran out of memory); now it is 1.5 GiB. The reference's N = 1 row carries its start-up.
# Times under TCG on a loaded host scatter widely (the first rows ran while the load rose); compare
# within a boot only. docs/net-protocol.md "Memory per connection" explains each figure.
# The eager ring allocated by bytes (32 KiB per end), a 32-entry mailbox, control writes staged per
# send-queue slot, 32 FIFO slots and 256 send requests; TSC, host load 3-6, 2026-12-02 12:05 UTC
# (REF_PLUGIN=... MEM=10G run.sh build):
# railscope:
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
#      1       88.0      496.0   2.00   2.00   4.00   3.00    209.507      9.719       631       94.8
#      8       88.0      256.0   2.00   2.00   4.00   3.00     13.688      6.108       274       72.7
#     64       88.0      343.2   2.00   2.00   4.00   3.00     16.730      2.971       284       81.8
#    256       88.0      324.6   2.00   2.00   4.00   3.00     13.493      1.945       271       67.1
#   1024       88.0      320.5   2.00   2.00   4.00   3.00     14.280      2.168       586       93.0
# reference:
#      1       88.0      796.0   2.00   2.00   4.00   3.00    166.299      4.302       208      118.1
#      8       88.0       98.5   2.00   2.00   4.00   3.00     15.418      2.366       184      124.0
#     64       88.0      107.2   2.00   2.00   4.00   3.00     12.084      1.504       325      128.7
#    256       88.0      280.5   2.00   2.00   4.00   3.00     10.069      1.472       171       65.8
#   1024       88.0      218.3   2.00   2.00   4.00   3.00      4.185      1.291       175       64.6
# RAILSCOPE_NET_EAGER_MAX=0, same code, 12:07 UTC (run.sh build 8,64,1024):
#      8       40.0      242.0   2.00   2.00   4.00   3.00     11.741      1.610       288       79.0
#     64       40.0      230.4   2.00   2.00   4.00   3.00      5.425      1.048       343       72.0
#   1024       40.0      243.8   2.00   2.00   4.00   3.00      5.710      0.796       302       71.7
# Pinned is now the reference's (88 KiB) or below (40 KiB receiver-driven). The rss column above is
# VmRSS, which left the reference's queue mappings out (split RSS counting); conn_scale now sums smaps
# (CONN_SCALE_SMAPS=1 run.sh build 64,256, 12:09 UTC), per pair at N = 64 / 256:
#   railscope  heap and anonymous 177 / 133 KiB, verbs device 192 / 192 KiB: 369 / 325 KiB
#   reference  heap and anonymous 126 / 117 KiB, verbs device 232 / 232 KiB: 358 / 349 KiB
# 128 send requests and 32 receive slots per connection (were 256 and 64), 2 December 2026 18:55 UTC, quiet
# host, CONN_SCALE_SMAPS=1 ROUNDS=3 BASE_PLUGIN=<main's plugin> REF_PLUGIN=... MEM=4G run.sh build 64,256,
# medians of 3 rounds, per pair at N = 64 / 256 (the second boot; docs/net-protocol.md has both):
#   railscope  heap 146.0 / 111.3 KiB, verbs device 192, connect 13.1 / 10.0 ms
#   base       heap 176.4 / 134.0 KiB, verbs device 192, connect 11.2 / 11.1 ms
#   reference  heap 126.3 /  94.3 KiB, verbs device 232, connect  7.8 /  8.8 ms
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
counts=${2:-1,8,64,256,1024}
drv=$build/bench/connection_scale/conn_scale
[[ -x $drv ]] || { echo "no $drv: cmake --build $build --target conn_scale" >&2; exit 2; }
ref=${REF_PLUGIN:-}
if [[ -n $ref && ! -e $ref ]]; then echo "REF_PLUGIN=$ref does not exist: reference skipped" >&2; ref=; fi
base=${BASE_PLUGIN:-}
if [[ -n $base && ! -e $base ]]; then echo "BASE_PLUGIN=$base does not exist: skipped" >&2; base=; fi
log=$(mktemp /tmp/conn_scale.XXXXXX.log)
trap 'rm -f "$log"' EXIT
# Two processes of up to 1,024 send + 1,024 receive comms each: far more guest memory than the default.
# Guest clock from the TSC as on real hosts (the emulated HPET makes every clock read a system call,
# which test() pays once in 16 calls); RAILSCOPE_TESTBED_APPEND= (empty) measures on the HPET instead.
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
# RAILSCOPE_NET_EAGER_MAX, when set, travels into the guest (0: the receiver-driven protocol).
flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --mem "${MEM:-10G}" --timeout 1800 \
    ${RAILSCOPE_NET_EAGER_MAX:+--env "RAILSCOPE_NET_EAGER_MAX=$RAILSCOPE_NET_EAGER_MAX"} \
    ${CONN_SCALE_SMAPS:+--env CONN_SCALE_SMAPS=1} --env "ROUNDS=${ROUNDS:-1}" -- \
    "$root/bench/connection_scale/guest.sh" "$drv" "$counts" "$ref" "$base" | tee "$log"
if [[ ${ROUNDS:-1} -gt 1 ]]; then python3 "$root/bench/connection_scale/medians.py" "$log"; fi
