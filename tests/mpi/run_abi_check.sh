#!/usr/bin/env bash
# run_abi_check.sh [--long] PROGRAM PRELOAD MPIEXEC NPS [ARGS...] — the MPI-5 standard ABI
# build of libcollie_mpi (build/lib/abi/libcollie_mpi.so).
# PROGRAM is tests/mpi's mpi_check compiled with mpicc_abi's flags (linked to
# libmpi_abi.so.1), MPIEXEC the launcher of the MPI whose libmpi_abi.so.1 the program loads
# (MPICH 5's; for another implementation set LD_LIBRARY_PATH to its lib/ and pass its
# mpiexec).  PRELOAD must be linked to no MPI library.  For each rank count in NPS
# (comma-separated): a plain run and one with LD_PRELOAD=PRELOAD and COLLIE_MPI_LOG=summary,
# both with ARGS.  Passes when both runs check their results and print identical digest
# lines, the summary shows collie serving each collective named below, and every rank of
# the preloaded run has exactly one MPI library mapped, libmpi_abi (mpi_check
# --list-mpi-libs).  Exit 77 when PROGRAM or MPIEXEC is missing (no MPI with the standard
# ABI was found), or with --long unless COLLIE_LONG_TESTS=1.
set -u
if [ "${1:-}" = --long ]; then   # a longer run: only with COLLIE_LONG_TESTS=1
  [ "${COLLIE_LONG_TESTS:-0}" = 1 ] || { echo "SKIP: set COLLIE_LONG_TESTS=1"; exit 77; }
  shift
fi
prog=$1 pre=$2 mpiexec=$3 nps=$4
shift 4
args=("$@")
[ -x "$prog" ] && [ -x "$mpiexec" ] ||
  { echo "SKIP: no MPI with the MPI-5 standard ABI ($prog, $mpiexec)"; exit 77; }
work=$(mktemp -d /tmp/collie-abi-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=${COLLIE_MPI_TEST_TIMEOUT:-300}
fail() { echo "FAIL (standard ABI, $np ranks): $*"; exit 1; }
np=-
[ -f "$pre" ] || fail "$pre is missing"
if readelf -d "$pre" | grep NEEDED | grep -Eq 'lib(mpi|mpich)'; then
  readelf -d "$pre" | grep NEEDED
  fail "$pre is linked to an MPI library"
fi

# The calls the summary must show served by collie (with --colls-only: allgather … exscan).
fns=(MPI_Allgather MPI_Iallgather MPI_Allgather_init MPI_Alltoallv MPI_Gatherv MPI_Scatter MPI_Scan
     MPI_Reduce_scatter_block)
[[ " ${args[*]} " == *" --colls-only "* ]] ||
  fns+=(MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Barrier MPI_Iallreduce MPI_Ibcast MPI_Allreduce_init)

for np in ${nps//,/ }; do
  start=$(date +%s%N)
  timeout -k 10 "$limit" "$mpiexec" -n "$np" "$prog" "${args[@]}" --list-mpi-libs \
    >"$work/plain.out" 2>"$work/plain.err" ||
    { tail -20 "$work/plain.err" "$work/plain.out"; fail "the plain run failed"; }
  mid=$(date +%s%N)
  timeout -k 10 "$limit" "$mpiexec" -n "$np" -genv LD_PRELOAD "$pre" -genv COLLIE_MPI_LOG summary \
    "$prog" "${args[@]}" --list-mpi-libs >"$work/collie.out" 2>"$work/collie.err" ||
    { grep -v '^collie_mpi:' "$work/collie.err" | tail -20; tail -5 "$work/collie.out"
      fail "the run with $pre failed"; }
  end=$(date +%s%N)
  grep -q '^passed' "$work/plain.out" || fail "the plain run did not pass"
  grep -q '^passed' "$work/collie.out" || fail "the run with libcollie_mpi did not pass"
  if ! diff -q "$work/plain.out" "$work/collie.out" >/dev/null; then
    diff "$work/plain.out" "$work/collie.out" | head -20
    fail "results differ between MPI and collie"
  fi
  for fn in "${fns[@]}"; do
    grep -Eq "^collie_mpi: +[1-9][0-9]*  $fn +collie\$" "$work/collie.err" ||
      { grep -E "collie_mpi: .* $fn " "$work/collie.err"; fail "the summary shows no $fn served by collie"; }
  done
  # Each rank's list of the MPI libraries mapped into it (mpi_check --list-mpi-libs).
  maps=$(grep -E '^mpi_check: rank [0-9]+: [0-9]+ MPI libraries mapped:' "$work/collie.err")
  [ "$(echo "$maps" | grep -c .)" = "$np" ] || fail "not every rank listed its MPI libraries"
  if echo "$maps" | grep -v ": 1 MPI libraries mapped: /[^ ]*/libmpi_abi\.so[.0-9]*\$" | grep -q .; then
    echo "$maps"
    fail "a rank has another MPI library than libmpi_abi mapped, or more than one"
  fi
  printf 'np %s: plain %d ms, collie %d ms; %s; %s; the MPI library of every rank: %s\n' "$np" \
    $(((mid - start) / 1000000)) $(((end - mid) / 1000000)) \
    "$(grep -c . "$work/collie.out") identical result lines" \
    "$(grep -E '^collie_mpi: +[0-9]+  calls' "$work/collie.err" | sed 's/^collie_mpi: *//')" \
    "$(echo "$maps" | sed 's/.*mapped: //' | sort -u | tr '\n' ' ')"
done
echo "PASS (standard ABI, ranks $nps)"
