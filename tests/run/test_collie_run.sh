#!/usr/bin/env bash
# test_collie_run.sh — tests of the collie-run launcher.
#   usage: test_collie_run.sh PATH/TO/collie-run CASE
# Each CASE is one ctest test (see tests/run/CMakeLists.txt).  Long-running ranks are
# started as `exec -a $TOKEN sleep 30`, so "no process of the job is left" is checked by
# looking for processes whose argv[0] is $TOKEN.
set -euo pipefail

RUN=$1
CASE=$2
WRAP=()   # a command run_job puts before collie-run (case bind: taskset)
TOKEN="collie-run-test-$$-$RANDOM"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/collie-run-test.XXXXXX")
OUT=$DIR/out
ERR=$DIR/err

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in "$OUT" "$ERR"; do
        [[ -s $f ]] && { echo "--- ${f##*/}:" >&2; head -n 20 "$f" >&2; }
    done
    exit 1
}

# PIDs of live processes whose argv[0] is exactly $1 (zombies have no cmdline).
procs_named() {
    local f a0
    for f in /proc/[0-9]*/cmdline; do
        a0=""
        IFS= read -r -d '' a0 2>/dev/null <"$f" || true
        if [[ $a0 == "$1" ]]; then
            f=${f#/proc/}
            echo "${f%/cmdline}"
        fi
    done
}

cleanup() {
    local p
    for p in $(procs_named "$TOKEN") $(procs_named "$TOKEN-gc"); do kill -9 "$p" 2>/dev/null || true; done
    [[ -s $DIR/job ]] && rm -f /dev/shm/collie-"$(cat "$DIR/job")"*
    rm -rf "$DIR"
    rm -f /dev/shm/collie-"$TOKEN"*
}
trap cleanup EXIT

now() { echo "$EPOCHREALTIME"; }
# elapsed_below START LIMIT: succeeds if less than LIMIT seconds passed since START.
elapsed_below() { awk -v s="$1" -v e="$(now)" -v l="$2" 'BEGIN { exit !(e - s < l) }'; }

# run_job ARGS...: runs collie-run, output to $OUT/$ERR, status to $RC (never fails).
run_job() {
    RC=0
    "${WRAP[@]}" "$RUN" "$@" >"$OUT" 2>"$ERR" || RC=$?
}

expect_rc() { [[ $RC == "$1" ]] || fail "expected exit status $1, got $RC"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "stderr lacks: $1"; }

expect_no_procs() {
    local left
    left=$(procs_named "$TOKEN"; procs_named "$TOKEN-gc")
    [[ -z $left ]] || fail "processes of the job still alive: $left"
}

# wait_ready N: waits (up to 5 s) until N ranks have created $DIR/ready.*.
wait_ready() {
    local i
    for ((i = 0; i < 100; i++)); do
        (($(find "$DIR" -name 'ready.*' | wc -l) >= $1)) && return 0
        sleep 0.05
    done
    fail "ranks did not start"
}

# A rank script: marks itself ready, then runs its argument as a shell command.
cat >"$DIR/rank.sh" <<EOF
#!/usr/bin/env bash
touch "$DIR/ready.\$COLLIE_RANK"
eval "\$1"
EOF
chmod +x "$DIR/rank.sh"
SLEEPER="exec -a $TOKEN sleep 30"

case_env() {
    local r job job2
    run_job -n 4 sh -c 'env | grep -E "^(COLLIE_|RANK=|WORLD_SIZE=|LOCAL_|MASTER_)" > "$0/env.$COLLIE_RANK"' "$DIR"
    expect_rc 0
    job=$(sed -n 's/^COLLIE_JOB=//p' "$DIR/env.0")
    [[ $job =~ ^[A-Za-z0-9-]+$ ]] || fail "bad COLLIE_JOB '$job'"
    for r in 0 1 2 3; do
        [[ -f $DIR/env.$r ]] || fail "rank $r did not run"
        for kv in "COLLIE_RANK=$r" "COLLIE_SIZE=4" "COLLIE_LOCAL_RANK=$r" "COLLIE_LOCAL_SIZE=4" \
            "COLLIE_JOB=$job" "COLLIE_LAUNCHER=collie-run" "RANK=$r" "WORLD_SIZE=4" \
            "LOCAL_RANK=$r" "LOCAL_WORLD_SIZE=4" "MASTER_ADDR=127.0.0.1"; do
            grep -qx -- "$kv" "$DIR/env.$r" || fail "rank $r: missing $kv"
        done
    done
    # torchrun's MASTER_PORT: one port for all ranks, a number; the caller's wins
    port=$(sed -n 's/^MASTER_PORT=//p' "$DIR/env.0")
    [[ $port =~ ^[0-9]+$ ]] || fail "bad MASTER_PORT '$port'"
    for r in 1 2 3; do
        grep -qx -- "MASTER_PORT=$port" "$DIR/env.$r" || fail "rank $r: MASTER_PORT differs"
    done
    MASTER_PORT=4711 run_job -n 2 sh -c 'echo "$MASTER_PORT"'
    [[ $(sort -u "$OUT") == 4711 ]] || fail "the caller's MASTER_PORT was not kept: $(cat "$OUT")"
    # torchrun's OMP_NUM_THREADS=1 for several ranks, unless the caller set it; not for one
    (unset OMP_NUM_THREADS; run_job -n 2 sh -c 'echo "${OMP_NUM_THREADS-unset}"')
    [[ $(sort -u "$OUT") == 1 ]] || fail "OMP_NUM_THREADS not 1 for 2 ranks: $(cat "$OUT")"
    OMP_NUM_THREADS=3 run_job -n 2 sh -c 'echo "$OMP_NUM_THREADS"'
    [[ $(sort -u "$OUT") == 3 ]] || fail "the caller's OMP_NUM_THREADS was not kept: $(cat "$OUT")"
    (unset OMP_NUM_THREADS; run_job -n 1 sh -c 'echo "${OMP_NUM_THREADS-unset}"')
    [[ $(cat "$OUT") == unset ]] || fail "OMP_NUM_THREADS set for one rank: $(cat "$OUT")"
    run_job -n 1 sh -c 'echo "$COLLIE_JOB"'
    job2=$(cat "$OUT")
    [[ -n $job2 && $job2 != "$job" ]] || fail "job ids not unique: '$job' '$job2'"
}

case_exit_status() {
    local t0
    t0=$(now)
    # rank 2 fails once all are up; rank 1 leaves a grandchild in the background.
    run_job -n 4 "$DIR/rank.sh" '
        case $COLLIE_RANK in
        2) while [ $(ls '"$DIR"'/ready.* | wc -l) -lt 4 ]; do sleep 0.05; done; sleep 0.2; exit 3 ;;
        1) (exec -a '"$TOKEN"'-gc sleep 30) & wait ;;
        *) '"$SLEEPER"' ;;
        esac'
    expect_rc 3
    elapsed_below "$t0" 10 || fail "collie-run took too long to stop the job"
    expect_err "rank 2 (pid "
    expect_err "exited with status 3; stopping the other 3 ranks"
    expect_no_procs
}

case_signal() {
    run_job -n 3 sh -c 'if [ "$COLLIE_RANK" = 1 ]; then kill -SEGV $$; fi; sleep 0.5'
    expect_rc 139
    expect_err "rank 1 (pid "
    expect_err "killed by signal 11"
}

case_timeout() {
    local t0
    t0=$(now)
    run_job -n 3 --timeout 0.5 "$DIR/rank.sh" "$SLEEPER"
    expect_rc 124
    elapsed_below "$t0" 5 || fail "timeout not enforced quickly"
    expect_err "collie-run: timeout after 0.5 s; killing 3 ranks"
    expect_no_procs
    run_job -n 2 --timeout=5 true
    expect_rc 0
}

# Ranks create shm objects of their job (and near-miss names that must survive).
case_shm_cleanup() {
    local job other="/dev/shm/collie-$TOKEN-other-job"
    touch "$other"
    run_job -n 3 sh -c 'echo "$COLLIE_JOB" > "$0/job"; touch "/dev/shm/collie-$COLLIE_JOB" \
        "/dev/shm/collie-$COLLIE_JOB-rank$COLLIE_RANK" "/dev/shm/collie-${COLLIE_JOB}0";
        touch "$0/done.$COLLIE_RANK"; [ "$COLLIE_RANK" = 2 ] || exec sleep 30
        while [ $(ls "$0"/done.* | wc -l) -lt 3 ]; do sleep 0.02; done; exit 1' "$DIR"
    expect_rc 1
    job=$(cat "$DIR/job")
    [[ ! -e /dev/shm/collie-$job ]] || fail "/dev/shm/collie-$job not removed"
    ! compgen -G "/dev/shm/collie-$job-*" >/dev/null || fail "collie-$job-* not removed"
    [[ -e $other ]] || fail "shm file of another job was removed"
    [[ -e /dev/shm/collie-${job}0 ]] || fail "collie-${job}0 (not this job) was removed"
    rm -f "/dev/shm/collie-${job}0" "$other"
    expect_err "removed 4 leftover shared-memory objects"
}

# send_signal SIG STATUS: signal to a running collie-run stops the ranks.
send_signal() {
    local pid t0
    RC=0
    env --default-signal=INT "$RUN" -n 3 "$DIR/rank.sh" "$SLEEPER" >"$OUT" 2>"$ERR" &
    pid=$!
    wait_ready 3
    t0=$(now)
    kill -"$1" "$pid"
    wait "$pid" || RC=$?
    expect_rc "$2"
    elapsed_below "$t0" 5 || fail "collie-run took too long after SIG$1"
    expect_err "received signal"
    expect_no_procs
}

case_sigint() { send_signal INT 130; }
case_sigterm() { send_signal TERM 143; }

# A rank that ignores SIGTERM is SIGKILLed after the grace period.
case_grace() {
    local t0
    t0=$(now)
    run_job -n 2 "$DIR/rank.sh" "
        if [ \$COLLIE_RANK = 0 ]; then sleep 0.2; exit 5; fi
        trap '' TERM; exec -a $TOKEN sleep 30"
    expect_rc 5
    elapsed_below "$t0" 8 || fail "SIGTERM-ignoring rank not killed after the grace period"
    expect_no_procs
}

# If collie-run is SIGKILLed, the ranks die too (PR_SET_PDEATHSIG).
case_launcher_killed() {
    local pid i
    "$RUN" -n 3 "$DIR/rank.sh" "$SLEEPER" >"$OUT" 2>"$ERR" &
    pid=$!
    wait_ready 3
    kill -KILL "$pid"
    { wait "$pid"; } 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do
        [[ -z $(procs_named "$TOKEN") ]] && return 0
        sleep 0.05
    done
    expect_no_procs
}

case_usage() {
    local args
    for args in "" "true" "-n" "-n 0 true" "-n 4097 true" "-n abc true" "-n 2" "-n 2 --" \
        "-n 2 --bogus true" "-n 2 --timeout 0 true" "-n 2 --timeout x true"; do
        # shellcheck disable=SC2086
        run_job $args
        [[ $RC == 2 ]] || fail "'collie-run $args' returned $RC, expected 2"
        expect_err "usage:"
    done
    run_job --help
    expect_rc 0
    grep -q "usage:" "$OUT" || fail "--help prints no usage"
    run_job -np 2 -- sh -c 'exit 0'
    expect_rc 0
}

case_noexec() {
    run_job -n 2 "$DIR/does-not-exist"
    expect_rc 127
    expect_err "collie-run: cannot run $DIR/does-not-exist: No such file or directory"
    touch "$DIR/not-executable"
    run_job -n 2 "$DIR/not-executable"
    expect_rc 127
    expect_err "cannot run $DIR/not-executable: Permission denied"
}

case_many() {
    local r
    run_job -n 16 sh -c 'echo "$COLLIE_RANK" > "$0/r.$COLLIE_RANK"; echo "hi from $COLLIE_RANK"' "$DIR"
    expect_rc 0
    for ((r = 0; r < 16; r++)); do
        [[ $(cat "$DIR/r.$r" 2>/dev/null) == "$r" ]] || fail "rank $r of 16 missing"
    done
    [[ $(grep -c "^hi from" "$OUT") == 16 ]] || fail "expected 16 output lines"
    # Ranks finishing at different times with status 0 is success.
    run_job -n 4 sh -c 'sleep "0.$COLLIE_RANK"'
    expect_rc 0
}

case_tag_output() {
    local r
    run_job -n 4 --tag-output sh -c 'echo "out $COLLIE_RANK"; echo "err $COLLIE_RANK" >&2;
        printf "last $COLLIE_RANK"'
    expect_rc 0
    for ((r = 0; r < 4; r++)); do
        grep -qx "\[$r\] out $r" "$OUT" || fail "missing tagged stdout line of rank $r"
        grep -qx "\[$r\] last $r" "$OUT" || fail "missing unterminated line of rank $r"
        grep -qx "\[$r\] err $r" "$ERR" || fail "missing tagged stderr line of rank $r"
    done
    [[ $(wc -l <"$OUT") == 8 ]] || fail "unexpected stdout lines"
}

# CPU binding (tools/run_bind.c), from a known mask of two CPUs given by taskset.
allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$DIR/cpus.$1"; }
run_cpus() {   # run_cpus [collie-run options] -n P: every rank writes its allowed CPUs
    rm -f "$DIR"/cpus.*
    run_job "$@" sh -c 'grep Cpus_allowed_list /proc/self/status > "$0/cpus.$COLLIE_RANK";
        echo "$COLLIE_JOB_CPUS" > "$0/jobcpus.$COLLIE_RANK"' "$DIR"
}
case_bind() {
    local r first second
    command -v taskset >/dev/null || { echo "SKIP [bind]: no taskset"; return; }
    [[ $(nproc --all) -ge 2 ]] || { echo "SKIP [bind]: one CPU"; return; }
    taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null ||
        { echo "SKIP [bind]: CPUs 0 and 1 not both usable"; return; }
    WRAP=(taskset -c 0,1)
    # the default at 2 ranks on 2 CPUs: one CPU each, different ones; the job's CPUs told
    run_cpus -n 2
    expect_rc 0
    first=$(allowed 0); second=$(allowed 1)
    [[ $first == 0 && $second == 1 ]] || fail "2 ranks on CPUs 0,1 bound to '$first' and '$second'"
    for r in 0 1; do
        [[ $(cat "$DIR/jobcpus.$r") == 2 ]] || fail "rank $r: COLLIE_JOB_CPUS '$(cat "$DIR/jobcpus.$r")', not 2"
    done
    # unbound: --bind-to none, COLLIE_BIND_TO=none, one rank, more ranks than CPUs
    for how in "--bind-to none -n 2" "--bind-to=none -n 2" "-n 1" "-n 3"; do
        run_cpus $how
        expect_rc 0
        for r in 0 1 2; do
            [[ ! -f $DIR/cpus.$r || $(allowed $r) == 0-1 ]] || fail "$how: rank $r bound to '$(allowed $r)'"
        done
    done
    COLLIE_BIND_TO=none run_cpus -n 2
    [[ $(allowed 0) == 0-1 && $(allowed 1) == 0-1 ]] || fail "COLLIE_BIND_TO=none: ranks bound"
    # --bind-to core wins over COLLIE_BIND_TO, and binds one rank too
    COLLIE_BIND_TO=none run_cpus --bind-to core -n 1
    expect_rc 0
    [[ $(allowed 0) == 0 ]] || fail "--bind-to core -n 1: rank 0 bound to '$(allowed 0)'"
    # errors: more ranks than CPUs asked to bind, a bad value, a bad environment
    run_job --bind-to core -n 3 true
    expect_rc 2
    expect_err "--bind-to core: 3 ranks but collie-run may run on 2 CPUs"
    run_job --bind-to socket -n 2 true
    expect_rc 2
    expect_err "invalid --bind-to (must be core or none): socket"
    COLLIE_BIND_TO=yes run_job -n 2 true
    expect_rc 2
    expect_err 'COLLIE_BIND_TO="yes" must be core or none'
}

declare -F "case_$CASE" >/dev/null || { echo "unknown case '$CASE'" >&2; exit 2; }
"case_$CASE"
echo "PASS [$CASE]"
