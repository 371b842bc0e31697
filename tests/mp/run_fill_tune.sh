#!/usr/bin/env bash
# mp_fill_tune under COLLIE_LOG=debug with the kernel copy off (every call through the copy
# cells): every call exact (the program checks), and the log shows that every rank that
# fills cells timed calls both ways (memcpy and streaming stores) and chose one per
# collective and size class — the bcast's readers (ranks other than the root P - 1) fill
# none; they time their copies out of the root's cells both ways instead and choose, and
# the root times no copy out.  In allgather and alltoall every rank does both: it fills
# its cells and copies the others' out; the reductions copy nothing out (they reduce).
# The same for allgather and alltoall `direct` copying out of collie_alloc buffers mapped
# from the peers.  With path tuning on, no decider tries streaming stores in a size class
# before its way choice there.  Then COLLIE_SHM_STREAM=1 and COLLIE_SHM_STREAM_OUT_MIN=0
# fix the ways: no call timed.
# Usage: run_fill_tune.sh COLLIE_RUN MP_FILL_TUNE P
set -euo pipefail
run=$1 prog=$2 P=$3
# Streaming stores are native on x86-64 only (src/base/stream_copy.c): elsewhere the way
# is always memcpy and nothing is tried.
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: streaming stores only on x86-64"; exit 77; }
export COLLIE_SHM_KERNEL_MIN=0
# allgather and alltoall `direct` (auto takes `flat` for some of these sizes at some P,
# whose messages go through the slots, not the cells)
log=$(COLLIE_LOG=debug COLLIE_ALLGATHER_ALGO=direct COLLIE_ALLTOALL_ALGO=direct \
      "$run" -n "$P" --timeout 240 "$prog" 2>&1) || { echo "$log" | tail -40; exit 1; }
fail() { echo "FAIL: $*"; echo "$log" | grep -E "the cells took|taking|exact" | tail -60; exit 1; }
[ "$(grep -c 'calls of each collective at 2 sizes exact' <<<"$log")" = "$P" ] || fail "not every rank checked its results"
root=$((P - 1))
# timed_both RANK COLL DIRECTION: RANK timed calls of COLL both ways and chose a way for
# both size classes; DIRECTION is "into" (its fills), "out of" (its copies out of other
# ranks' cells) or "mapped" (its copies out of the peers' mapped buffers).
timed_both() {
  local r=$1 coll=$2 dir=$3 timing what way n
  case $dir in
    into) timing="through the cells" what="into the cells" ;;
    "out of") timing="out of the cells" what="out of the cells" ;;
    *) timing="out of the peers' mapped buffers" what=$timing ;;
  esac
  for way in memcpy "streaming stores"; do
    grep -q "collie\[$r\] debug: rank $r: $coll of [0-9]* B $timing took .* us with $way" <<<"$log" ||
      fail "$coll: rank $r never timed its copies $what with $way"
  done
  n=$(grep -c "collie\[$r\] info: rank $r: copies $what in $coll of .* taking" <<<"$log" || true)
  [ "$n" = 2 ] || fail "$coll: rank $r chose a way for its copies $what for $n size classes, want 2"
}
for coll in allreduce reduce bcast allgather alltoall; do
  ranks=$(seq 0 $root)
  [ $coll = bcast ] && ranks=$root
  for r in $ranks; do timed_both "$r" $coll into; done
done
readers=$(grep "debug: rank [0-9]*: bcast of [0-9]* B through the cells took" <<<"$log" | grep -vc "collie\[$root\]" || true)
[ "$readers" = 0 ] || fail "bcast: ranks other than the root timed their fills"
for r in $(seq 0 $((root - 1))); do timed_both "$r" bcast "out of"; done
for coll in allgather alltoall; do
  for r in $(seq 0 $root); do timed_both "$r" $coll "out of"; done
done
if grep -q "collie\[$root\] debug: rank $root: bcast of .* out of the cells took" <<<"$log"; then fail "bcast: the root timed copies out"; fi
if grep "out of the cells took" <<<"$log" | grep -qvE ": (bcast|allgather|alltoall) of"; then
  fail "copies out timed in a reduction (they reduce out of the cells, copying nothing)"
fi
# collie_alloc buffers on every rank, bcast `direct_copy`, allgather and alltoall `direct`:
# every allgather and alltoall rank copies the blocks straight out of its peers' mapped
# buffers and times those copies both ways, as every bcast reader does with the root's
# buffer at P = 3 (at P = 2 the two ranks split the copy, by the fixed rule, and from 4 all
# ranks split it, by collie_outputs_stream), the root timing none.
log=$(COLLIE_LOG=debug COLLIE_BCAST_ALGO=direct_copy COLLIE_ALLGATHER_ALGO=direct \
      COLLIE_ALLTOALL_ALGO=direct "$run" -n "$P" --timeout 240 "$prog" 16 mapped 2>&1) ||
  { echo "$log" | tail -40; exit 1; }
[ "$(grep -c 'calls of each collective at 2 sizes exact' <<<"$log")" = "$P" ] || fail "mapped: not every rank checked its results"
bcast_readers=$(seq 0 $((root - 1)))
[ "$P" -gt 2 ] || bcast_readers=
if grep -q "collie\[$root\] debug: rank $root: bcast of .* out of the peers' mapped buffers took" <<<"$log" ||
   { [ "$P" = 2 ] && grep -q "bcast of .* out of the peers' mapped buffers took" <<<"$log"; }; then
  fail "bcast, mapped: the root (or at P = 2 a rank of the split copy) timed copies"
fi
for c in "bcast $bcast_readers" "allgather $(seq 0 $root)" "alltoall $(seq 0 $root)"; do
  set -- $c
  coll=$1; shift
  for r; do timed_both "$r" "$coll" mapped; done
done
if grep -qE "(through|out of) the cells took" <<<"$log"; then fail "mapped: calls went through the cells"; fi
# With path tuning on (COLLIE_SHM_KERNEL_MIN unset) the decider's way trial (path_tune.c)
# comes first: the copy trial's calls with the other way (streaming stores are slower for
# these calls on most machines) must not be calls the way trial counts.  So no rank that
# decides (rank 0 for allreduce, the root P - 1 for bcast and reduce) logs a call through
# the cells with streaming stores in a size class before its way choice for that class.
log=$(env -u COLLIE_SHM_KERNEL_MIN COLLIE_LOG=debug "$run" -n "$P" --timeout 240 "$prog" 24 2>&1) ||
  { echo "$log" | tail -40; exit 1; }
[ "$(grep -c 'calls of each collective at 2 sizes exact' <<<"$log")" = "$P" ] || fail "path tuning on: not every rank checked its results"
for c in "allreduce 0" "bcast $root" "reduce $root"; do
  set -- $c
  for bytes in 1048576 2097152; do
    mine=$(grep "^collie\[$2\] " <<<"$log" || true)
    choice=$(grep -n "rank $2: $1 of $bytes B up to .* taking" <<<"$mine" | head -1 | cut -d: -f1)
    [ -n "$choice" ] || fail "path tuning on: rank $2 chose no way for $1 of $bytes B"
    early=$(head -n "$choice" <<<"$mine" | grep -c "rank $2: $1 of $bytes B through the cells took .* with streaming stores" || true)
    [ "$early" = 0 ] || fail "path tuning on: rank $2 tried streaming stores in $1 of $bytes B before its way choice"
  done
done
log=$(COLLIE_SHM_STREAM=1 COLLIE_SHM_STREAM_OUT_MIN=0 COLLIE_LOG=debug "$run" -n "$P" --timeout 240 "$prog" 4 2>&1) || { echo "$log" | tail -40; exit 1; }
[ "$(grep -c 'calls of each collective at 2 sizes exact' <<<"$log")" = "$P" ] || fail "fixed ways: not every rank checked its results"
if grep -qE "(through|out of) the (cells|peers' mapped buffers) took" <<<"$log"; then fail "COLLIE_SHM_STREAM=1 and COLLIE_SHM_STREAM_OUT_MIN=0 fix the ways, yet calls were timed"; fi
echo "fill way checked at P=$P"
