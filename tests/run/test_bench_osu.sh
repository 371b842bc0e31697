#!/usr/bin/env bash
# collie-bench with OSU's flags: -m MIN:MAX, -i, -x, -f, -c, -T and --format osu give
# OSU's columns with checked results; a rank per core more than there are cores gives the
# warning; bad OSU values are refused with a message.
# usage: test_bench_osu.sh COLLIE_RUN COLLIE_BENCH
set -u
run=$1 bench=$2
fail() { echo "FAIL: $*"; exit 1; }
out=$("$run" -n 2 "$bench" --coll allreduce -m 8:64 -i 20 -x 2 -f -c -T mpi_int --format osu 2>&1) ||
  fail "exit status: $out"
echo "$out"
echo "$out" | grep -q '^# OSU-style Allreduce Latency Test' || fail "no OSU title"
echo "$out" | grep -Eq '^# Size +Avg Latency\(us\) +Min Latency\(us\) +Max Latency\(us\) +Iterations$' ||
  fail "no OSU column header"
for size in 8 16 32 64; do   # int32: 2, 4, 8, 16 elements, 20 iterations each
  echo "$out" | grep -Eq "^$size +[0-9.]+ +[0-9.]+ +[0-9.]+ +20\$" || fail "no row for $size bytes"
done
[ "$(echo "$out" | grep -Ec '^[0-9]+ ')" = 4 ] || fail "expected exactly 4 rows"
echo "$out" | grep -q 'dtype=int32' || fail "-T mpi_int is not int32"
echo "$out" | grep -qi 'check.*fail\|wrong' && fail "--check (-c) reported wrong results"
# -m MAX alone, and the warning when ranks outnumber the cores this job may use
if command -v taskset >/dev/null; then
  out=$(taskset -c 0 "$run" -n 2 "$bench" -m 16 -i 5 2>&1) || fail "exit status: $out"
  echo "$out" | grep -q 'warning: 2 ranks on 1 cores' || fail "no oversubscription warning: $out"
  echo "$out" | grep -Eq '^ +16 ' || fail "-m 16: no 16-byte row: $out"
fi
out=$("$run" -n 1 "$bench" -m 8: 2>&1) && fail "-m 8: accepted"
echo "$out" | grep -q 'expected MAX or MIN:MAX' || fail "-m 8: message: $out"
out=$("$run" -n 1 "$bench" -T mpi_double 2>&1) && fail "-T mpi_double accepted"
echo "$out" | grep -q 'expected mpi_char, mpi_int or mpi_float' || fail "-T message: $out"
echo "passed: OSU flags"
