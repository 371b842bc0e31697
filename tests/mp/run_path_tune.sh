#!/usr/bin/env bash
# mp_path_tune under COLLIE_LOG=debug: every call exact (the program checks), and the log
# shows that the decider of each collective timed both ways (and at 32 and 256 KiB, where
# the slots serve, the copy cells as a third; a P = 2 bcast or reduce with a core per rank,
# and a reduce with more ranks than cores, at 1 MiB too) and chose one: rank 0 for
# allreduce, the root (P - 1) for reduce and bcast; then reduce and bcast with the root
# moving every call, checked exact.  The algorithms that have the choice are
# forced (auto takes others at some sizes: trees for a small bcast).
# Then, with COLLIE_SHM_KERNEL_MIN=0 ("never the kernel copy") and the preload COUNTER
# counting process_vm_readv/writev calls of 4 KiB or more: none on any rank, whichever
# path of these algorithms a call takes (mapped, cells or slots: the slots path used to
# read messages from 256 KiB with the executor's kernel copy); and some with
# COLLIE_SHM_KERNEL_MIN=32768, so the count does see them.
# Usage: run_path_tune.sh COLLIE_RUN MP_PATH_TUNE P COUNTER
set -euo pipefail
run=$1 prog=$2 P=$3 counter=$4
export COLLIE_ALLREDUCE_ALGO=direct_segments COLLIE_REDUCE_ALGO=direct_segments
export COLLIE_BCAST_ALGO=direct_copy
log=$(COLLIE_LOG=debug "$run" -n "$P" --timeout 240 "$prog" 96 2>&1) || { echo "$log" | tail -40; exit 1; }
fail() { echo "FAIL: $*"; echo "$log" | grep -E "took|taking|exact" | tail -60; exit 1; }
[ "$(grep -c 'calls of each collective at 3 sizes exact' <<<"$log")" = "$P" ] || fail "not every rank checked its results"
root=$((P - 1))
# timed_each COLL RANK WHAT WAY...: rank RANK timed calls of COLL by every WAY.
timed_each() {
  local coll=$1 r=$2 what=$3 way; shift 3
  for way; do
    grep -q "collie\[$r\] debug: rank $r: $coll of [0-9]* B took .* us by $way" <<<"$log" ||
      fail "$coll$what: rank $r never timed a call by $way"
  done
}
# chose_three COLL RANK WHAT PATTERN: rank RANK logged a choice matching PATTERN for 3
# size classes.
chose_three() {
  local n
  n=$(grep -c "collie\[$2\] info: rank $2: $1 of $4 taking" <<<"$log" || true)
  [ "$n" = 3 ] || fail "$1$3: rank $2 chose a way for $n size classes, want 3"
}
for c in "allreduce 0" "reduce $root" "bcast $root"; do
  set -- $c
  timed_each "$1" "$2" "" "the kernel copy" "shared memory"
  # the third way, the copy cells, tried only where the slots would serve (32 and
  # 256 KiB here; from 32 KiB, path_tune.c's CELLS_TRIAL_MIN)
  for b in 32768 262144; do
    grep -q "collie\[$2\] debug: rank $2: $1 of $b B took .* us by the copy cells" <<<"$log" ||
      fail "$1: rank $2 never timed a $b B call through the copy cells"
  done
  # ... and for a bcast or reduce at P = 2 with a core per rank, and a reduce with more
  # ranks than cores, at every size: there the slots are among the ways at 1 MiB too
  # (direct_access.c, pair_tries_slots and shared_cores_tries_slots; the reduce's slots
  # then run flat's schedule, checked exact like every call)
  if { [ "$1" != allreduce ] && [ "$P" = 2 ] && [ "$P" -le "$(nproc)" ]; } ||
     { [ "$1" = reduce ] && [ "$P" -gt "$(nproc)" ]; }; then
    grep -q "collie\[$2\] debug: rank $2: $1 of 1048576 B took .* us by the copy cells" <<<"$log" ||
      fail "$1: rank $2 never timed a 1 MiB call through the copy cells (the slots, the cells and the kernel copy are its ways)"
    grep -q "collie\[$2\] info: rank $2: $1 of 1048576 B up to .* (the slots), the copy cells .* taking" <<<"$log" ||
      fail "$1: rank $2's choice at 1 MiB is not among the slots, the cells and the kernel copy"
  elif grep -E "debug: rank [0-9]*: $1 of 1048576 B took .* us by the copy cells" <<<"$log"; then
    fail "$1: the copy cells tried at 1 MiB (not where the slots serve)"
  fi
  chose_three "$1" "$2" "" ".*"
  others=$(grep "debug: rank [0-9]*: $1 of [0-9]* B took" <<<"$log" | grep -vc "collie\[$2\]" || true)
  [ "$others" = 0 ] || fail "$1: ranks other than $2 timed calls"
done
# A reader late to every call (P = 2, bcast 32 KiB through binary_tree's messages, the
# root choosing the way of what it sends): a call the root timed must not end before its
# reader took the data, by either way (through the slots the root could else return
# before its reader even entered the call, and the trial would compare that with the
# kernel copy's whole call).  The program notes the calls from which the root returned
# before its reader entered them ("early: K"); the root's timed calls are the class's
# first ones (as many as it logged), none of which may be early.  Exact, whatever the
# scheduler does.  With more ranks than cores no 32 KiB message takes the kernel copy.
if [ "$P" = 2 ] && [ "$P" -le "$(nproc)" ]; then
  log=$(COLLIE_LOG=debug COLLIE_BCAST_ALGO=binary_tree "$run" -n 2 --timeout 240 "$prog" 96 late 2>&1) ||
    { echo "$log" | tail -40; exit 1; }
  [ "$(grep -c 'exact (bcast 32 KiB, readers late)' <<<"$log")" = 2 ] || fail "late reader: not every rank checked"
  timed_each bcast 1 " (late reader)" "the kernel copy" "shared memory"
  timed=$(grep -c "collie\[1\] debug: rank 1: bcast of 32768 B took" <<<"$log" || true)
  first_early=$( (grep -o "rank 1: early: [0-9]*" <<<"$log" || true) | awk '{print $NF}' | sort -n | head -1)
  if [ -n "$first_early" ] && [ "$first_early" -lt "$timed" ]; then
    fail "late reader: the root's call $first_early (one of its $timed timed calls) returned before its reader entered it"
  fi
fi
# The choice revisited (core/path_revisit.c, where every rank has a core): after 256
# calls of the chosen way the decider sends 18 through the trial's next-best way and keeps
# or takes it; every rank follows call by call, so every call stays exact across the
# change of way and back (or to the new way for good: then a window of it, kept or left).
if [ "$P" -le "$(nproc)" ]; then
  log=$(COLLIE_LOG=debug "$run" -n "$P" --timeout 240 "$prog" 700 revisit 2>&1) ||
    { echo "$log" | tail -40; exit 1; }
  [ "$(grep -c 'exact (allreduce and reduce 32 KiB, the choice revisited)' <<<"$log")" = "$P" ] ||
    fail "revisit: not every rank checked its results"
  for c in "allreduce 0" "reduce $root"; do
    set -- $c
    pre="collie\[$2\] [a-z]*: rank $2: $1 of 32768 B up to 65535 B:"
    grep -q "$pre 256 calls by .* probing .* for 18 calls" <<<"$log" ||
      fail "revisit: rank $2 never probed another way for $1 of 32 KiB"
    grep -Eq "$pre a window of calls by .*: (keeping the former|taking the latter)" <<<"$log" ||
      fail "revisit: rank $2's probe of $1 of 32 KiB never ended"
    if grep -q "$pre a window of calls by .*: taking the latter" <<<"$log"; then
      grep -Eq "$pre once taken, the calls .*: (keeping the former|going back)" <<<"$log" ||
        fail "revisit: rank $2 took another way for $1 of 32 KiB but never timed a window of it"
    fi
  done
fi
# Roots moving every call: each root decides from its own timings; results still exact.
log=$("$run" -n "$P" --timeout 240 "$prog" 80 rotate 2>&1) || { echo "$log" | tail -40; exit 1; }
[ "$(grep -c 'exact (roots rotating)' <<<"$log")" = "$P" ] || { echo "FAIL: rotating roots: $log"; exit 1; }
# Every buffer mapped (collie_alloc), 1-4 MiB (per block for allgather, alltoall and
# reduce_scatter_block, `direct` forced): where every rank has a core, the decider times
# the mapped buffers against the copy cells and chooses (with more ranks than cores it
# does not: the mapped buffers); results exact whichever way a call took.
log=$(COLLIE_LOG=debug COLLIE_ALLGATHER_ALGO=direct COLLIE_ALLTOALL_ALGO=direct \
      COLLIE_REDUCE_SCATTER_ALGO=direct "$run" -n "$P" --timeout 240 "$prog" 16 mapped 2>&1) || { echo "$log" | tail -40; exit 1; }
[ "$(grep -c 'exact (every buffer mapped)' <<<"$log")" = "$P" ] || fail "every buffer mapped: not every rank checked its results"
for c in "allreduce 0" "reduce $root" "bcast $root" "allgather 0" "alltoall 0" "reduce_scatter 0"; do
  set -- $c
  if [ "$P" -gt "$(nproc)" ]; then   # more ranks than cores: no trial, the mapped buffers
    if grep -q "debug: rank [0-9]*: $1 of [0-9]* B took .* us by the copy cells" <<<"$log"; then
      fail "$1, every buffer mapped, $P ranks on $(nproc) cores: the copy cells were tried"
    fi
    continue
  fi
  timed_each "$1" "$2" ", every buffer mapped" "the mapped buffers" "the copy cells"
  chose_three "$1" "$2" ", every buffer mapped" ".* with every buffer mapped: .*"
done
# Kernel copies counted per rank: "rank R: kernel copies of 4 KiB or more: N".
copies() {
  log=$(COLLIE_SHM_KERNEL_MIN=$1 LD_PRELOAD="$counter" "$run" -n "$P" --timeout 240 "$prog" 20 2>&1) ||
    { echo "$log" | tail -40; exit 1; }
  [ "$(grep -c 'calls of each collective at 3 sizes exact' <<<"$log")" = "$P" ] ||
    { echo "FAIL: COLLIE_SHM_KERNEL_MIN=$1: not every rank checked its results"; echo "$log" | tail -20; exit 1; }
  [ "$(grep -c 'kernel copies of 4 KiB or more' <<<"$log")" = "$P" ] ||
    { echo "FAIL: the counter did not report on every rank"; echo "$log" | tail -20; exit 1; }
  grep 'kernel copies of 4 KiB or more' <<<"$log" | awk '{s += $NF} END {print s}'
}
never=$(copies 0)
[ "$never" = 0 ] || { echo "FAIL: COLLIE_SHM_KERNEL_MIN=0 (never the kernel copy), yet $never kernel copies"; exit 1; }
some=$(copies 32768)
[ "$some" -gt 0 ] || { echo "FAIL: COLLIE_SHM_KERNEL_MIN=32768, yet the counter saw no kernel copy"; exit 1; }
echo "path choice checked at P=$P (kernel copies: $never with COLLIE_SHM_KERNEL_MIN=0, $some from 32 KiB)"
