#!/usr/bin/env bash
# scripts/conformance.sh — MPICH's own collective test suite (test/mpi/coll of the Debian
# source package of the installed MPICH), run plain and through the drop-in
# (LD_PRELOAD=<build>/lib/<flavour>/libcollie_mpi.so), for each MPI flavour built here.
#
#   bash scripts/conformance.sh [--quick | --full | --long-only] [--flavours "mpich openmpi"]
#                               [--build DIR] [--tests REGEX] [--apps | --no-apps]
#                               [--table FILE] [--timeout SECONDS]
#
# --quick (the default unless COLLIE_LONG_TESTS=1): the subset in QUICK below — every call
#   collie serves (allreduce, reduce, bcast, barrier, their I* and persistent forms, in
#   place, several types and ops; of allgather … exscan, which tests/mpi's mpi_check covers in
#   full, reduce_scatter(_block) in place, exscan and its persistent form, and every I* form
#   through "nonblocking"); --full: every line of coll/testlist and coll/testlist.dtp
#   (lines needing more than 20 GB or more than 16 ranks are left out and listed), then the
#   applications; --long-only: --full when COLLIE_LONG_TESTS=1, else exit 77 (for ctest).  --tests REGEX keeps the lines whose text matches.  --apps runs LAMMPS
#   (melt, peptide: identical thermo output) and HPCC (its own checks) plain and through
#   the drop-in (Open MPI build: Debian's lmp and hpcc link Open MPI); default: in --full.
#
# Prints one table: test, ranks, arguments, plain result and seconds, drop-in result and
# seconds, calls served by collie / passed to PMPI (COLLIE_MPI_LOG=summary, all ranks; 0 / 0
# when the program ended before MPI_Finalize).
# A line passes as MPICH's runtests decides: exit status 0, " No Errors" printed, nothing
# else printed (the drop-in's log lines aside).  Exit status 1 when any line passes plain
# and fails through the drop-in (or an application differs), 77 when the suite cannot be
# had (no MPICH installed, no network/root for apt-get).
#
# Cache: <build>/conformance/ holds the source tarball, the extracted suite and one
# configured build per flavour (configure runs once; only the tests a run needs are
# compiled).  Getting the source: `apt-get source --download-only mpich=<installed
# version>`, after adding a deb-src line for Debian's main archive in
# /etc/apt/sources.list.d/collie-deb-src.sources when there is none (then apt-get update).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=quick; [ "${COLLIE_LONG_TESTS:-0}" = 1 ] && MODE=full
FLAVOURS="mpich openmpi"; BUILD=${BUILD_DIR:-build}; FILTER=""; APPS=""; TABLE=""; TLIMIT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) MODE=quick; shift ;;
    --full) MODE=full; shift ;;
    --long-only) [ "${COLLIE_LONG_TESTS:-0}" = 1 ] || { echo "conformance.sh: SKIP: COLLIE_LONG_TESTS=1 not set"; exit 77; }
                 MODE=full; shift ;;
    --flavours) FLAVOURS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --tests) FILTER=$2; shift 2 ;;
    --apps) APPS=1; shift ;;
    --no-apps) APPS=0; shift ;;
    --table) TABLE=$2; shift 2 ;;
    --timeout) TLIMIT=$2; shift 2 ;;
    *) echo "conformance.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$APPS" ] || { [ "$MODE" = full ] && APPS=1 || APPS=0; }
[ -n "$TLIMIT" ] || { [ "$MODE" = full ] && TLIMIT=180 || TLIMIT=120; }   # runtests' default: 180
BUILD=$(cd "$BUILD" && pwd) || { echo "conformance.sh: no build directory" >&2; exit 2; }
CACHE=$BUILD/conformance
mkdir -p "$CACHE"
MAX_NP=16 MAX_GB=20

# The CI subset: lines of coll/testlist (allredmany and reduce 5 are left to the full run:
# plain MPICH 4.0.2 takes minutes on them with 4-5 ranks on 2 busy cores).  The op* lines
# reduce every predefined type with one op each.  p_order checks persistent collectives
# matched by initialization order; nonblocking3 (progress shared with MPI) runs tens of
# seconds, so it stays in the full run (and in tests/mpi's interlock tests).
QUICK=(
  "allred 4 arg=-count=10" "allred2 4" "allred4 4" "allred6 4" "op_commutative 2" "uoplong 4"
  "bcasttest 4" "bcastzerotype 4"
  "opsum 4" "opprod 5" "opminloc 4" "opband 4" "oplor 4"
  "iallred 2" "ibarrier 2 timeLimit=30" "nonblocking 4"
  "p_allred 4 strict=false" "p_red 4 strict=false" "p_bcast 4 strict=false"
  "p_barrier 2 strict=false"
  "red_scat_block 4" "p_exscan 5 strict=false" "p_order 2 strict=false"
)

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1

skip() { echo "conformance.sh: SKIP: $*"; exit 77; }
say() { echo "conformance.sh: $*" >&2; }

# ---- the source ----------------------------------------------------------------------------

have_deb_src() {
  grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/
}

add_deb_src() {
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  [ "$(id -u)" = 0 ] || skip "no deb-src line in the apt sources, and not root to add one"
  say "adding /etc/apt/sources.list.d/collie-deb-src.sources (deb-src $codename main)"
  cat > /etc/apt/sources.list.d/collie-deb-src.sources <<EOF
# added by collie's scripts/conformance.sh: source packages (MPICH's test suite)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed"
}

# Sets SUITE to the extracted test/mpi of the installed MPICH's source.
get_suite() {
  local version upstream tarball
  version=$(dpkg-query -W -f='${source:Version}' libmpich-dev 2>/dev/null) ||
    skip "Debian's MPICH (libmpich-dev) is not installed"
  upstream=${version#*:}; upstream=${upstream%%-*}
  SUITE=$CACHE/src/mpich-$upstream/test/mpi
  [ -x "$SUITE/configure" ] && return 0
  mkdir -p "$CACHE/src"
  tarball=$(ls "$CACHE/src/mpich_$upstream.orig.tar."* 2>/dev/null | head -1)
  if [ -z "$tarball" ]; then
    have_deb_src || add_deb_src
    say "apt-get source --download-only mpich=$version"
    (cd "$CACHE/src" && apt-get source -qq --download-only "mpich=$version" >/dev/null 2>&1) ||
      { apt-get update -qq >/dev/null 2>&1;
        (cd "$CACHE/src" && apt-get source -qq --download-only "mpich=$version" >/dev/null 2>&1); } ||
      skip "apt-get source mpich=$version failed (network?)"
    tarball=$(ls "$CACHE/src/mpich_$upstream.orig.tar."* 2>/dev/null | head -1)
  fi
  [ -n "$tarball" ] || skip "no mpich_$upstream.orig.tar.* after apt-get source"
  tar xf "$tarball" -C "$CACHE/src" "mpich-$upstream/test/mpi" || skip "cannot extract $tarball"
}

# Mends two tests' own bug, idempotently: nonblocking2.c and nonblocking3.c keep their
# MPI_Alltoallw datatypes in `int *` arrays, which holds MPICH's integer handles but truncates
# Open MPI's pointer handles (plain Open MPI then segfaults in PMPI_Ialltoallw).  The arrays
# become `MPI_Datatype *`; nothing else in the tests changes.
patch_suite() {
  local t
  for t in nonblocking2 nonblocking3; do
    grep -q '^[[:space:]]*int \*\(send\|recv\)types' "$SUITE/coll/$t.c" || continue
    sed -i -e 's/^\([[:space:]]*\)int \*\(send\|recv\)types\([;= ]\)/\1MPI_Datatype *\2types\3/' \
      "$SUITE/coll/$t.c" || return 1
  done
}

# ---- building ------------------------------------------------------------------------------

# Configures the suite for flavour $1 into $CACHE/$1 once.
configure_flavour() {
  local f=$1 dir=$CACHE/$1 cppflags="" n
  # Open MPI 4.1's mpi.h turns the MPI-1 names dtpools still uses into static assertions
  # unless told otherwise (its libmpi has them), and has MPI-4's persistent collectives as
  # MPIX_*_init of its pcollreq extension (mpi-ext.h): the p_* tests call them so.
  if [ "$f" = openmpi ]; then
    cppflags="-DOMPI_OMIT_MPI1_COMPAT_DECLS=0 -include mpi.h -include mpi-ext.h"
    for n in Allgather Allgatherv Allreduce Alltoall Alltoallv Alltoallw Barrier Bcast Exscan \
             Gather Gatherv Neighbor_allgather Neighbor_allgatherv Neighbor_alltoall \
             Neighbor_alltoallv Neighbor_alltoallw Reduce Reduce_scatter_block Reduce_scatter \
             Scan Scatter Scatterv; do
      cppflags="$cppflags -DMPI_${n}_init=MPIX_${n}_init"
    done
  fi
  local mpicc stamp
  mpicc=$(command -v "mpicc.$f")
  stamp="$mpicc $cppflags"
  [ -f "$dir/coll/Makefile" ] && [ "$(cat "$dir/.collie-configured" 2>/dev/null)" = "$stamp" ] && return 0
  rm -rf "$dir"; mkdir -p "$dir"
  say "configuring MPICH's test suite for $f (once; log: $dir/configure.log)"
  (cd "$dir" && MPICC=$mpicc MPIEXEC=$(command -v "mpirun.$f") nice "$SUITE/configure" \
     CPPFLAGS="$cppflags" --enable-fortran=no --disable-cxx --disable-romio --disable-spawn \
     --disable-rma --disable-part --disable-ft-tests --disable-perftest >configure.log 2>&1) ||
    { tail -20 "$dir/configure.log"; return 1; }
  grep -qx "CC = $mpicc" "$dir/coll/Makefile" ||
    { say "$f: the suite was configured with $(grep '^CC = ' "$dir/coll/Makefile"), not $mpicc"; return 1; }
  nice make -C "$dir/util" >"$dir/make-util.log" 2>&1 || { tail -20 "$dir/make-util.log"; return 1; }
  echo "$stamp" >"$dir/.collie-configured"
}

# Builds the programs of the selected lines (make only rebuilds what is missing).
build_tests() {
  local f=$1; shift
  local dir=$CACHE/$f/coll
  nice make -C "$dir" -j2 -k "$@" >"$dir/make-tests.log" 2>&1 || true
}

# ---- the lines -----------------------------------------------------------------------------

# Prints the selected lines of the suite (one per line), and the left-out ones to $1.
select_lines() {
  local left_out=$1 dir=$2 line
  : >"$left_out"
  if [ "$MODE" = quick ]; then
    for line in "${QUICK[@]}"; do
      grep -qxF "$line" "$dir/testlist" || { say "the CI subset's line '$line' is not in $dir/testlist"; return 1; }
      printf '%s\n' "$line"
    done | { [ -n "$FILTER" ] && grep -E -- "$FILTER" || cat; }
    return 0
  fi
  cat "$dir/testlist" "$dir/testlist.dtp" 2>/dev/null | sed -e 's/#.*//' -e 's/[[:space:]]*$//' |
    grep -v '^[[:space:]]*$' | { [ -n "$FILTER" ] && grep -E -- "$FILTER" || cat; } |
    while read -r line; do
      set -- $line
      local np=$2 mem
      mem=$(printf '%s\n' "$line" | sed -n 's/.*mem=\([0-9.]*\).*/\1/p')
      if [ "$np" -gt "$MAX_NP" ] || { [ -n "$mem" ] && awk -v m="$mem" -v x="$MAX_GB" 'BEGIN { exit !(m > x) }'; }; then
        printf '%s\n' "$line" >>"$left_out"
      else
        printf '%s\n' "$line"
      fi
    done
}

# Runs one line: run_line FLAVOUR PRELOAD(0|1) OUTFILE LINE...; prints "pass|fail|timeout SECONDS".
run_line() {
  local f=$1 pre=$2 out=$3; shift 3
  local prog=$1 np=$2 limit=$TLIMIT args=() envs=() opt
  shift 2
  for opt in "$@"; do
    case "$opt" in
      arg=*) args+=("${opt#arg=}") ;;
      env=*) envs+=("${opt#env=}") ;;
      timeLimit=*) limit=${opt#timeLimit=} ;;
    esac
  done
  # COLLIE_MPI_LOG=summary: one table from rank 0 at MPI_Finalize (per-call lines of many
  # ranks could interleave with the test's own output)
  [ "$pre" = 1 ] && envs+=("LD_PRELOAD=$BUILD/lib/$f/libcollie_mpi.so" COLLIE_MPI_LOG=summary)
  local launch=() kv
  if [ "$f" = openmpi ]; then
    launch=(mpirun.openmpi --oversubscribe --bind-to none -np "$np")
    for kv in "${envs[@]}"; do launch+=(-x "$kv"); done
  else
    launch=(mpirun.mpich -np "$np")
    for kv in "${envs[@]}"; do launch+=(-genv "${kv%%=*}" "${kv#*=}"); done
  fi
  local dir=$CACHE/$f/coll t0 t1 rc
  if [ ! -x "$dir/$prog" ]; then
    echo "notbuilt 0"; return
  fi
  t0=$(date +%s.%N)
  (cd "$dir" && MPIEXEC_TIMEOUT=$limit timeout -k 10 "$((limit + 15))" "${launch[@]}" "./$prog" "${args[@]}") </dev/null >"$out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ] || grep -q "APPLICATION TIMED OUT\|Timeout of .* expired\|job aborted.*timeout" "$out"; then
    echo "timeout $secs"; return
  fi
  # MPICH's rule: status 0, " No Errors", nothing else (the drop-in's log lines aside).
  if [ "$rc" = 0 ] && grep -qE '^[[:space:]]*No [Ee]rrors[[:space:]]*$' "$out" &&
     ! grep -vE '^[[:space:]]*(No [Ee]rrors|Test Passed)[[:space:]]*$|^collie_mpi: ' "$out" | grep -q .; then
    echo "pass $secs"
  else
    echo "fail $secs"
  fi
}

# ---- the applications -------------------------------------------------------------------------

# thermo output of a LAMMPS log: the lines from a "Step" header to "Loop time", and the
# multi-style blocks ("---------------- Step N ----- CPU = ..."), without the CPU time.
lammps_thermo() {
  awk '/^ *Step|^-+ Step/ { on = 1 } /^Loop time/ { on = 0 } on' "$1" |
    sed 's/ CPU = *[0-9.]* (sec) / /'   # the multi style's block header carries the CPU time
}

app_line() {   # app_line NAME PLAIN_RESULT PLAIN_S DROPIN_RESULT DROPIN_S DROPIN_LOG RANKS
  local log=$6 c p
  read -r c p < <(sed -n 's/^collie_mpi: *[0-9]* *calls, \([0-9]*\) served by collie, \([0-9]*\) passed to PMPI.*/\1 \2/p' \
                   "$log" 2>/dev/null | tail -1)
  printf '| %s | %s | %s %s | %s %s | %s / %s |\n' "$1" "$7" "$2" "$3" "$4" "$5" "${c:-0}" "${p:-0}" >>"$RESULTS"
  if [ "$2" = pass ] && [ "$4" != pass ]; then
    REGRESSIONS+=("app $1"); fi
}

run_apps() {
  local f=openmpi lib=$BUILD/lib/openmpi/libcollie_mpi.so w=$CACHE/apps
  [ -f "$lib" ] || { say "apps: no Open MPI build: skipped"; return; }
  if ! command -v lmp >/dev/null || ! command -v hpcc >/dev/null || [ ! -d /usr/share/lammps/examples/melt ]; then
    if [ "$(id -u)" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lammps lammps-examples hpcc >/dev/null 2>&1 ||
        { say "apps: apt-get install lammps lammps-examples hpcc failed: skipped"; return; }
    else
      say "apps: lammps/hpcc not installed and not root: skipped"; return
    fi
  fi
  mkdir -p "$w"
  local ex pre name t0 rc res secs
  for ex in melt peptide; do
    for pre in 0 1; do
      name=$ex.$pre
      rm -rf "$w/$name"; cp -r "/usr/share/lammps/examples/$ex" "$w/$name"
      local envs=(); [ "$pre" = 1 ] && envs=(-x "LD_PRELOAD=$lib" -x COLLIE_MPI_LOG=summary)
      t0=$(date +%s.%N)
      (cd "$w/$name" && timeout 600 mpirun.openmpi --oversubscribe --bind-to none -np 4 "${envs[@]}" \
         lmp -in "in.$ex" -log log.lammps) </dev/null >"$w/$name.out" 2>&1
      rc=$?
      secs[$pre]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      lammps_thermo "$w/$name/log.lammps" >"$w/$name.thermo"
      res[$pre]=fail
      [ "$rc" = 0 ] && [ -s "$w/$name.thermo" ] && res[$pre]=pass
    done
    if [ "${res[1]}" = pass ] && ! cmp -s "$w/$ex.0.thermo" "$w/$ex.1.thermo"; then
      res[1]="fail(thermo differs)"
    fi
    app_line "lammps $ex (thermo identical)" "${res[0]}" "${secs[0]}" "${res[1]}" "${secs[1]}" "$w/$ex.1.out" 4
  done
  for pre in 0 1; do
    name=hpcc.$pre
    rm -rf "$w/$name"; mkdir -p "$w/$name"
    cp /usr/share/doc/hpcc/examples/_hpccinf.txt "$w/$name/hpccinf.txt"
    local envs=(); [ "$pre" = 1 ] && envs=(-x "LD_PRELOAD=$lib" -x COLLIE_MPI_LOG=summary)
    t0=$(date +%s.%N)
    (cd "$w/$name" && timeout 900 mpirun.openmpi --oversubscribe --bind-to none -np 4 "${envs[@]}" hpcc) \
      </dev/null >"$w/$name.out" 2>&1
    rc=$?
    secs[$pre]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    res[$pre]=fail
    # HPCC's own checks: HPL's residual test, and no FAILED anywhere in its report.
    if [ "$rc" = 0 ] && grep -q "PASSED" "$w/$name/hpccoutf.txt" 2>/dev/null &&
       ! grep -q "FAILED" "$w/$name/hpccoutf.txt"; then res[$pre]=pass; fi
  done
  app_line "hpcc (its checks)" "${res[0]}" "${secs[0]}" "${res[1]}" "${secs[1]}" "$w/hpcc.1.out" 4
}

# ---- main ----------------------------------------------------------------------------------

get_suite
patch_suite || skip "cannot patch $SUITE/coll/nonblocking[23].c"
# This run's lines (a run of its own: two runs sharing the build directory do not mix
# their tables), kept as results-$MODE.md at the end.
RESULTS=$CACHE/results-$MODE.$$.md
: >"$RESULTS"
REGRESSIONS=()
declare -A COUNT
flavours_run=""
for f in $FLAVOURS; do
  if [ ! -f "$BUILD/lib/$f/libcollie_mpi.so" ] || ! command -v "mpicc.$f" >/dev/null; then
    say "$f: no $BUILD/lib/$f/libcollie_mpi.so or mpicc.$f: skipped"; continue
  fi
  configure_flavour "$f" || { say "$f: configuring the suite failed"; REGRESSIONS+=("$f: configure"); continue; }
  flavours_run="$flavours_run $f"
  lines=$CACHE/$f/lines-$MODE; left=$CACHE/$f/left-out-$MODE
  select_lines "$left" "$CACHE/$f/coll" >"$lines" || exit 1
  mapfile -t progs < <(awk '{ print $1 }' "$lines" | sort -u)
  say "$f: building ${#progs[@]} test programs, running $(grep -c . "$lines") lines"
  build_tests "$f" "${progs[@]}"
  n=0 pp=0 dp=0 only=0 nb=0
  while IFS= read -r line; do
    set -- $line
    n=$((n + 1))
    rm -f "$CACHE/$f/out.plain" "$CACHE/$f/out.dropin"; touch "$CACHE/$f/out.dropin"
    read -r pres psecs < <(run_line "$f" 0 "$CACHE/$f/out.plain" $line)
    read -r dres dsecs < <(run_line "$f" 1 "$CACHE/$f/out.dropin" $line)
    read -r c p < <(sed -n 's/^collie_mpi: *[0-9]* *calls, \([0-9]*\) served by collie, \([0-9]*\) passed to PMPI.*/\1 \2/p' \
                     "$CACHE/$f/out.dropin" | tail -1)
    c=${c:-0} p=${p:-0}
    prog=$1 np=$2; shift 2
    printf '| %s | %s | %s | %s | %s %s | %s %s | %s / %s |\n' "$f" "$prog" "$np" "$*" "$pres" "$psecs" \
      "$dres" "$dsecs" "$c" "$p" >>"$RESULTS"
    if [ "$pres" = notbuilt ]; then
      nb=$((nb + 1))
      # the CI subset must run every line: a program that did not build fails the run
      [ "$MODE" = quick ] && REGRESSIONS+=("$f: $line (not built: $CACHE/$f/coll/make-tests.log)")
    fi
    [ "$pres" = pass ] && pp=$((pp + 1))
    [ "$dres" = pass ] && dp=$((dp + 1))
    if [ "$pres" = pass ] && [ "$dres" != pass ]; then
      only=$((only + 1)); REGRESSIONS+=("$f: $line")
      mkdir -p "$CACHE/$f/failures"
      cp "$CACHE/$f/out.dropin" "$CACHE/$f/failures/$(echo "$line" | tr ' /=' '___').dropin"
    fi
    tail -1 "$RESULTS" >&2
  done <"$lines"
  COUNT[$f]="$n lines: $pp pass plain, $dp pass through the drop-in, $only fail only through the drop-in"
  [ "$nb" -gt 0 ] && COUNT[$f]+=", $nb not built (see $CACHE/$f/coll/make-tests.log: e.g. MPI-4 calls Open MPI 4.1 lacks)"
done
[ "$APPS" = 1 ] && run_apps

{
  echo "| flavour | test | ranks | arguments | plain (s) | drop-in (s) | collie / PMPI calls |"
  echo "|---|---|---|---|---|---|---|"
  cat "$RESULTS"
  echo
  for f in $flavours_run; do
    echo "$f: ${COUNT[$f]}"
    if [ -s "$CACHE/$f/left-out-$MODE" ]; then
      echo "$f: left out (more than $MAX_NP ranks or $MAX_GB GB): $(tr '\n' ';' <"$CACHE/$f/left-out-$MODE")"
    fi
  done
  [ "$MODE" = quick ] && echo "quick mode (CI subset: ${#QUICK[@]} lines; --full runs every line)"
} | tee "${TABLE:-/dev/null}"
mv -f "$RESULTS" "$CACHE/results-$MODE.md"
if [ "${#REGRESSIONS[@]}" -gt 0 ]; then
  echo "FAIL: passes plain, fails through the drop-in:"
  printf '  %s\n' "${REGRESSIONS[@]}"
  echo "(drop-in output of each: $CACHE/<flavour>/failures/)"
  exit 1
fi
echo "PASS: no line fails only through the drop-in"
