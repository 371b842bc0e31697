#!/usr/bin/env bash
# poll_ratio.sh — how much a polling loop costs against blocking calls: collie-bench
# --mode blocking and --mode poll (i-call, then collie_test(req, 0) until done), run
# interleaved, N times; prints the per-call µs of both and their ratio.
#
#   bench/poll_ratio.sh [BUILD_DIR] [P] [N] [ITERS] [collie-bench options...]
#   e.g. bench/poll_ratio.sh build 4 8 3000 --coll allreduce --min-bytes 8 --max-bytes 8
set -u
B=${1:-build} P=${2:-4} N=${3:-5} ITERS=${4:-3000}
shift $(( $# < 4 ? $# : 4 ))
[ $# -gt 0 ] || set -- --coll allreduce --min-bytes 8 --max-bytes 8
for _ in $(seq "$N"); do
    line=""
    for m in blocking poll; do
        t=$("$B/collie-run" -n "$P" --timeout 300 -- "$B/collie-bench" --mode $m --iters "$ITERS" \
            --warmup 10 "$@" 2>&1 | awk '/^ *[0-9]/ && NF > 4 { v = $4 } END { print v }')
        line="$line $m=${t}us"
        eval "t_$m=$t"
    done
    echo "$line ratio=$(awk -v a="$t_poll" -v b="$t_blocking" 'BEGIN { printf "%.2f", a / b }')"
done
