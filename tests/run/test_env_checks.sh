#!/usr/bin/env bash
# test_env_checks.sh — collie_init checks the COLLIE_* environment: malformed numbers and
# words are refused quoting the text set, unknown names are warned about with the nearest
# known name, bad algorithm parameters are refused naming the valid keys or the floor, and
# a tuning file that is a device is refused at once; a size with a K/M/G suffix that the
# check accepts is used, not ignored.  Each case runs a 2-rank job.
#
#   test_env_checks.sh PATH/collie-run PATH/collie-bench
set -u
run=$1 bench=$2
fail=0
case_() {   # case_ WANT_OK|WANT_ERR 'expected text' VAR=VALUE...
    local want=$1 text=$2; shift 2
    local out rc
    out=$(env -u COLLIE_TIMEOUT_MS "$@" timeout 30 "$run" -n 2 -- "$bench" --coll allreduce \
          --min-bytes 8 --max-bytes 8 --iters 2 2>&1)
    rc=$?
    # A value the check accepted must also be used: "ignoring COLLIE_X=..." from the reader
    # (collie_env_int) means the two disagree (sizes with K/M/G suffixes once did).
    if { [ "$want" = WANT_OK ] && [ $rc -ne 0 ]; } || { [ "$want" = WANT_ERR ] && [ $rc -eq 0 ]; } ||
       [ $rc -eq 124 ] || ! grep -qF -- "$text" <<<"$out" ||
       { [ "$want" = WANT_OK ] && grep -qF -- "ignoring COLLIE_" <<<"$out"; }; then
        echo "FAIL: $* (exit $rc): wanted '$text' in:"; head -5 <<<"$out" | sed 's/^/    /'
        fail=1
    else
        echo "PASS: $*"
    fi
}
case_ WANT_ERR 'COLLIE_TIMEOUT_MS=-5 is out of range' COLLIE_TIMEOUT_MS=-5
case_ WANT_ERR 'COLLIE_TIMEOUT_MS="abc" is not a whole number' COLLIE_TIMEOUT_MS=abc
case_ WANT_ERR 'COLLIE_SHM_SLOT_BYTES=4294967296 is out of range' COLLIE_SHM_SLOT_BYTES=4294967296
case_ WANT_ERR 'COLLIE_SHM_SLOTS=-1 is out of range' COLLIE_SHM_SLOTS=-1
case_ WANT_ERR 'COLLIE_SHM_SLOT_BYTES=4G is out of range' COLLIE_SHM_SLOT_BYTES=4G
case_ WANT_ERR 'COLLIE_SHM_SLOT_BYTES="64X" is not a whole number' COLLIE_SHM_SLOT_BYTES=64X
case_ WANT_ERR 'COLLIE_SHM_SLOT_BYTES="K" is not a whole number' COLLIE_SHM_SLOT_BYTES=K
case_ WANT_OK '# collie-bench' COLLIE_SHM_SLOT_BYTES=64K COLLIE_SHM_CELL_BYTES=1MiB
case_ WANT_OK '# collie-bench' COLLIE_SHM_DIRECT_MIN=1M COLLIE_SHM_SLOTS_MAX=128K COLLIE_SPIN_NS=1K
case_ WANT_ERR 'COLLIE_LOG="verbose" is not valid (valid: error, warn, info, debug)' COLLIE_LOG=verbose
case_ WANT_ERR 'COLLIE_REDUCE_ISA="sse9" is not valid' COLLIE_REDUCE_ISA=sse9
case_ WANT_OK 'unknown environment variable COLLIE_TIMOUT_MS is ignored (did you mean COLLIE_TIMEOUT_MS?)' COLLIE_TIMOUT_MS=5
case_ WANT_OK 'did you mean COLLIE_ALLREDUCE_ALGO?' COLLIE_ALLREDUCE_ALG=ring
case_ WANT_ERR 'ring_pipelined:segment=1 is below its floor of 64' COLLIE_ALLREDUCE_ALGO=ring_pipelined:segment=1
case_ WANT_ERR "algorithm ring has no parameter 'foo'" COLLIE_ALLREDUCE_ALGO=ring:foo=1
case_ WANT_ERR "has no parameter 'x' (valid: segment)" COLLIE_BCAST_ALGO=chain:x=1
case_ WANT_ERR '/dev/zero: is a character device' COLLIE_TUNING_FILE=/dev/zero
case_ WANT_ERR '/tmp: is a directory' COLLIE_TUNING_FILE=/tmp
case_ WANT_OK '# collie-bench' COLLIE_TIMEOUT_MS=0 COLLIE_LOG=warn
exit $fail
