#!/usr/bin/env bash
# run_cancel.sh FLAVOUR NP PROGRAM — runs mpi_cancel (linked with libcollie_mpi) with NP
# ranks and COLLIE_LOG=info: its checks must pass, and each rank must say once that a
# collective cannot be cancelled (MPI_Cancel reached collie's requests).
set -u
flavour=$1 np=$2 prog=$3
out=$(COLLIE_LOG=info "$(dirname "$0")/run_mpi.sh" "$flavour" "$np" "$prog" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: the run exited with $rc"; exit 1; }
echo "$out" | grep -q '^passed: 0 failures' || { echo "FAIL: the checks did not pass"; exit 1; }
said=$(echo "$out" | grep -c 'MPI_Cancel on MPI_[A-Za-z_]* served by collie: a collective cannot be cancelled')
[ "$said" = "$np" ] || { echo "FAIL: $said info lines about MPI_Cancel, expected $np (one per rank)"; exit 1; }
echo "PASS ($flavour, $np ranks)"
