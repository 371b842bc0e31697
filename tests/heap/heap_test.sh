#!/bin/bash
# heap_test.sh COLLIE_RUN HEAP_THREADS LIBCOLLIE_HEAP CASE — one case of the shared heap:
#   mapped       P = 2, every rank preloaded: results right, buffers in the shared heap, and
#                the zero-copy path taken (collie's debug lines: a peer's heap mapped, and
#                peers' heap buffers used in place N > 0 times)
#   mixed        P = 3, rank 1 without the preload: results right, 2 ranks shared, 1 not
#   exhaust      COLLIE_HEAP_BYTES = 1 MiB: most large blocks fall back to malloc, results right
#                (the heap switched on by COLLIE_SHARED_HEAP=1 instead of --shared-heap)
#   fork         a child forked with live heap blocks cannot change the parent's
#   passthrough  preloaded outside collie-run (no job): nothing shared, all else works
#   launcher     collie-run's switch: LD_PRELOAD gets the library first (the old value kept),
#                a collie-run without the library next to it and COLLIE_SHARED_HEAP=x are
#                usage errors (exit 2), COLLIE_SHARED_HEAP=0 preloads nothing
# Prints "heap CASE: passed" on success.
set -u
run=$1 prog=$2 lib=$3 case=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export COLLIE_TIMEOUT_MS=60000
fail() { echo "heap $case: FAILED: $*"; echo "--- stdout"; cat "$dir/out"; echo "--- stderr"; tail -n 40 "$dir/err"; exit 1; }
count() { grep -cE "$1" "$2"; }
expect_ok() {   # expect_ok NRANKS NSHARED
  [ "$(count ': OK$' "$dir/out")" = "$1" ] || fail "not every rank printed OK"
  [ "$(count 'shared heap yes' "$dir/out")" = "$2" ] || fail "expected $2 ranks with a shared heap"
}
case $case in
mapped)
  COLLIE_LOG=debug "$run" -n 2 --timeout 150 --shared-heap "$prog" >"$dir/out" 2>"$dir/err" || fail "exit $?"
  expect_ok 2 2
  grep -qE "mapped rank [0-9]+'s shared heap" "$dir/err" || fail "no rank mapped a peer's shared heap"
  [ "$(count "used peers' shared-heap buffers in place [1-9][0-9]* times" "$dir/err")" = 2 ] ||
    fail "a rank did not use its peer's heap buffers in place"
  grep -qE "collie-heap: pid [0-9]+: [1-9][0-9]* allocations from the shared heap" "$dir/err" ||
    fail "the heap served nothing";;
mixed)
  "$run" -n 3 --timeout 150 --shared-heap sh -c \
    'if [ "$COLLIE_RANK" = 1 ]; then unset LD_PRELOAD; fi; exec "$0"' "$prog" >"$dir/out" 2>"$dir/err" || fail "exit $?"
  expect_ok 3 2
  grep -q "rank 1: shared heap no" "$dir/out" || fail "rank 1 should not have a shared heap";;
exhaust)
  COLLIE_SHARED_HEAP=1 COLLIE_HEAP_BYTES=1048576 COLLIE_LOG=debug "$run" -n 2 --timeout 150 "$prog" \
    >"$dir/out" 2>"$dir/err" || fail "exit $?"
  [ "$(count ': OK$' "$dir/out")" = 2 ] || fail "not every rank printed OK"
  grep -qE "allocations from the shared heap, [1-9][0-9]* fell back to malloc" "$dir/err" ||
    fail "nothing fell back to malloc with a 1 MiB heap";;
fork)
  "$run" -n 2 --timeout 150 --shared-heap "$prog" --fork >"$dir/out" 2>"$dir/err" || fail "exit $?"
  expect_ok 2 2;;
passthrough)
  env -u COLLIE_JOB LD_PRELOAD="$lib" COLLIE_SHARED_HEAP=1 "$prog" >"$dir/out" 2>"$dir/err" || fail "exit $?"
  expect_ok 1 0;;
launcher)
  LD_PRELOAD=libc.so.6 "$run" -n 1 --shared-heap sh -c 'echo "$LD_PRELOAD $COLLIE_SHARED_HEAP"' >"$dir/out" 2>"$dir/err" ||
    fail "exit $?"
  grep -qE "^/.*/libcollie_heap\.so:libc\.so\.6 1$" "$dir/out" || fail "LD_PRELOAD is not the library first"
  COLLIE_SHARED_HEAP=0 "$run" -n 1 sh -c 'echo "[$LD_PRELOAD]"' >"$dir/out" 2>"$dir/err" || fail "exit $?"
  grep -q '^\[\]$' "$dir/out" || fail "COLLIE_SHARED_HEAP=0 preloaded something"
  COLLIE_SHARED_HEAP=x "$run" -n 1 true >"$dir/out" 2>"$dir/err"
  [ $? = 2 ] && grep -q 'COLLIE_SHARED_HEAP="x" must be 0 or 1' "$dir/err" || fail "COLLIE_SHARED_HEAP=x accepted"
  cp "$run" "$dir/collie-run"
  "$dir/collie-run" -n 1 --shared-heap true >"$dir/out" 2>"$dir/err"
  [ $? = 2 ] && grep -q 'libcollie_heap.so is not next to collie-run' "$dir/err" || fail "a missing library accepted";;
*) echo "unknown case $case"; exit 2;;
esac
echo "heap $case: passed"
