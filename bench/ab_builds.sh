#!/usr/bin/env bash
# ab_builds.sh — two builds of collie timed in turn, reused and fresh data, so that a
# change is measured against the code before it in one run (the machine's state drifts
# between runs minutes apart; see docs/performance.md).
#
#   bench/ab_builds.sh OLD_BUILD NEW_BUILD P COLL MIN MAX [ROUNDS] [-- collie-bench options]
#
# e.g. git worktree add /tmp/old HEAD~1 && cmake -S /tmp/old -B /tmp/old/build && \
#      cmake --build /tmp/old/build -j && bench/ab_builds.sh /tmp/old/build build 2 allreduce 64K 1M 2
# Prints one line per build, data mode and round: µs per call (slowest rank's mean, a
# barrier before every call) for each size from MIN to MAX in steps of 2, after the
# machine's state before the run (the one-way cache-line latency between CPUs 0 and 1 of
# NEW_BUILD's bench/floors line, in ns: compare only lines of one state).
set -euo pipefail
[ $# -ge 6 ] || { sed -n '2,12p' "$0"; exit 2; }
old=$1 new=$2 P=$3 coll=$4 min=$5 max=$6
rounds=${7:-2}
shift $(( $# >= 7 ? 7 : 6 ))
[ "${1:-}" = "--" ] && shift
for r in $(seq 1 "$rounds"); do
  for v in old new; do
    b=$old; [ $v = new ] && b=$new
    for d in --barrier-each --fresh-data; do
      probe=$("$new/bench/floors" line 2>/dev/null | awk '{ printf "%.0f", $3 }' || true)
      printf '[%4s ns] %s P=%s %s %-12s' "${probe:--}" "$v" "$P" "$coll" "${d#--}:"
      "$b/collie-run" -n "$P" "$b/collie-bench" --coll "$coll" --min-bytes "$min" \
        --max-bytes "$max" --step-factor 2 "$d" "$@" 2>/dev/null |
        awk '!/^#/ { printf " %s", $6 } END { print "" }'
    done
  done
done
