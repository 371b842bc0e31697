#!/usr/bin/env bash
# A /dev/shm too small for the shared-memory segment (a container's default is 64 MiB):
# collie must fit or fail with a clear error, never die of SIGBUS at a page's first touch.
# In a mount namespace of its own (root and unshare needed, else skipped: 77) it mounts a
# small tmpfs on /dev/shm and runs 8 ranks of collie-bench --check (allreduce, reduce, bcast
# 8 B - 8 MiB; exact results checked):
#   40 MiB, with a ring of 32 cells (COLLIE_SHM_CELLS=32; the default ring of 8 is the
#          window already): the ring shrinks to a call's window (warning), results exact;
#   20 MiB: no copy cells (warning), results exact;
#    4 MiB: not even the slots fit: every rank's run fails with an error that names
#           /dev/shm and what to do, and no rank dies of a signal.
# Usage: run_small_shm.sh COLLIE_RUN COLLIE_BENCH
set -uo pipefail
if [ "${1:-}" = --inner ]; then
  shift
  size=$1 run=$2 bench=$3
  mount -t tmpfs -o "size=$size" tmpfs /dev/shm || exit 90
  for coll in allreduce reduce bcast; do
    COLLIE_LOG=warn "$run" -n 8 --timeout 120 "$bench" --coll "$coll" --min-bytes 8 \
      --max-bytes 8M --step-factor 32 --check --iters 3 --warmup 1 || exit $?
  done
  exit 0
fi
run=$1 bench=$2
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "SKIP: needs root and unshare -m (a mount namespace for a small /dev/shm)"
  exit 77
fi
fail() { echo "FAIL: $*"; echo "$out" | tail -20; exit 1; }
for case in "40M window" "20M none"; do
  set -- $case
  cells=8; [ "$2" = window ] && cells=32
  out=$(COLLIE_SHM_CELLS=$cells unshare -m "$0" --inner "$1" "$run" "$bench" 2>&1)
  rc=$?
  [ $rc = 90 ] && { echo "SKIP: cannot mount a tmpfs on /dev/shm"; exit 77; }
  [ $rc = 0 ] || fail "/dev/shm of $1: the runs failed (exit $rc)"
  grep -q "signal\|Bus error" <<<"$out" && fail "/dev/shm of $1: a rank died of a signal"
  grep -q "check failed\|wrong\|mismatch" <<<"$out" && fail "/dev/shm of $1: wrong results"
  [ "$(grep -c '^ *8388608 ' <<<"$out")" = 3 ] || fail "/dev/shm of $1: not every collective reached 8 MiB"
  if [ "$2" = window ]; then
    grep -q "warn: rank 0: /dev/shm has .* free; .*a ring of copy cells as short as a call's window" <<<"$out" ||
      fail "/dev/shm of $1: no warning that the ring of cells shrank to the window"
  else
    grep -q "warn: rank 0: /dev/shm has .* free; .* (no copy cells)" <<<"$out" ||
      fail "/dev/shm of $1: no warning that the team goes without copy cells"
  fi
  echo "ok: /dev/shm of $1: exact results, cells: $2"
done
out=$(unshare -m "$0" --inner 4M "$run" "$bench" 2>&1)
rc=$?
[ $rc = 0 ] && fail "/dev/shm of 4 MiB: the run succeeded, but 8 ranks' slots alone need 8 MiB"
grep -q "signal\|Bus error" <<<"$out" && fail "/dev/shm of 4 MiB: a rank died of a signal"
grep -q "rank 0: cannot allocate the [0-9]* bytes of shared memory .* for 8 ranks (/dev/shm has [0-9]* bytes free): No space left on device; .* enlarge /dev/shm" <<<"$out" ||
  fail "/dev/shm of 4 MiB: no error naming /dev/shm and what to do"
echo "ok: /dev/shm of 4M: a clear error, no signal"
echo "passed"
