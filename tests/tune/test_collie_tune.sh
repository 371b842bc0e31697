#!/bin/bash
# test_collie_tune.sh RUN TUNE BENCH CASE — one test of the collie-tune tool (see
# CMakeLists.txt): --quick under collie-run -n 2 writes a tuning file that parses and holds
# plausible numbers; the library accepts it (COLLIE_TUNING_FILE) and a bad file is
# reported with its file name and line.
set -u
RUN=$1
TUNE=$2
BENCH=$3
CASE=$4
SIM=${5:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL $CASE: $*"; exit 1; }

quick_file() {
    local start end
    start=$(date +%s)
    "$RUN" -n 2 "$TUNE" --quick --out "$TMP/t.json" > "$TMP/out" 2>&1 || fail "exit status: $(cat "$TMP/out")"
    end=$(date +%s)
    [ $((end - start)) -lt 5 ] || fail "--quick took $((end - start)) s"
}

case $CASE in
quick)
    quick_file
    grep -q '"schema": 1' "$TMP/t.json" || fail "no schema: $(cat "$TMP/t.json")"
    out=$("$TUNE" --check "$TMP/t.json") || fail "--check rejects the written file: $out"
    echo "$out" | grep -q 'schema 1, 1 model entries, 0 rules' || fail "summary: $out"
    # alpha between 10 ns and 1 ms; beta below 1e-7 s/byte (any machine moves > 10 MB/s)
    alpha=$(sed -n 's/.*"alpha": \([^,]*\),.*/\1/p' "$TMP/t.json")
    beta=$(sed -n 's/.*"beta": \([^,]*\),.*/\1/p' "$TMP/t.json")
    awk -v a="$alpha" -v b="$beta" 'BEGIN { exit !(a > 1e-8 && a < 1e-3 && b > 0 && b < 1e-7) }' \
        || fail "implausible alpha=$alpha beta=$beta"
    ;;
use_file)
    quick_file
    COLLIE_TUNING_FILE="$TMP/t.json" COLLIE_LOG=debug "$RUN" -n 2 "$BENCH" --coll allreduce \
        --min-bytes 8 --max-bytes 64K > "$TMP/bench" 2>&1 || fail "collie-bench with the file: $(cat "$TMP/bench")"
    grep -q "cost model of $TMP/t.json" "$TMP/bench" || fail "the model was not used: $(head -20 "$TMP/bench")"
    ;;
check_bad)
    printf '{"schema": 1,\n "models": [{"alpha": "fast"}]}\n' > "$TMP/bad.json"
    out=$("$TUNE" --check "$TMP/bad.json" 2>&1) && fail "accepted a bad file"
    echo "$out" | grep -q "$TMP/bad.json:2: alpha must be a number" || fail "message: $out"
    COLLIE_TUNING_FILE="$TMP/bad.json" "$RUN" -n 2 "$BENCH" --coll barrier > "$TMP/o" 2>&1 \
        && fail "collie_init accepted a bad COLLIE_TUNING_FILE"
    grep -q "bad.json:2: alpha must be a number" "$TMP/o" || fail "init message: $(cat "$TMP/o")"
    ;;
rules)
    # --rules on 2 and then 3 ranks: one file with rules for both team sizes; every rule
    # names a registered algorithm that the library then picks for a call it covers
    for np in 2 3; do
        "$RUN" -n $np "$TUNE" --quick --rules --repeat 2 --out "$TMP/r.json" > "$TMP/out" 2>&1 \
            || fail "exit status (n=$np): $(cat "$TMP/out")"
    done
    out=$("$TUNE" --check "$TMP/r.json") || fail "--check rejects the written file: $out"
    echo "$out" | grep -q 'allreduce P 2\.\.2 bytes 0\.\.' || fail "no P=2 rule from 0 bytes: $out"
    echo "$out" | grep -q 'allreduce P 3\.\.3 bytes 0\.\.' || fail "no P=3 rule from 0 bytes: $out"
    [ -n "$SIM" ] || exit 0
    echo "$out" | sed -n 's/.*allreduce P \([0-9]*\)\.\.[0-9]* bytes \([0-9]*\)\.\.[0-9]* -> \(.*\)/\1 \2 \3/p' |
    while read -r p lo alg; do
        lo=$(( lo < 8 ? 8 : (lo + 7) / 8 * 8 ))
        got=$("$SIM" predict --coll allreduce --algo auto --tuning "$TMP/r.json" --P "$p" \
              --bytes "$lo" --csv | tail -1)
        echo "$got" | grep -q ",chose $alg\$" || fail "P=$p $lo bytes: rule names $alg, auto: $got"
    done || exit 1
    ;;
rules_colls)
    # --rules --coll for the collectives of issue 16: rules for them at P = 2; the rules
    # already in the file for a collective not measured (allreduce) or another P stay
    printf '{"schema": 1, "rules": [\n  {"coll": "allreduce", "p_min": 2, "p_max": 2, "algorithm": "ring"},\n  {"coll": "allgather", "p_min": 3, "p_max": 3, "algorithm": "ring"}\n]}\n' > "$TMP/c.json"
    "$RUN" -n 2 "$TUNE" --quick --rules --repeat 1 --sizes 8,64K --malloc \
        --coll allgather,reduce_scatter,alltoall,gather,scatter,scan,exscan \
        --out "$TMP/c.json" > "$TMP/out" 2>&1 || fail "exit status (--coll): $(cat "$TMP/out")"
    out=$("$TUNE" --check "$TMP/c.json") || fail "--check rejects the written file: $out"
    for c in allreduce allgather reduce_scatter alltoall gather scatter scan exscan; do
        echo "$out" | grep -q "$c P 2\.\.2 bytes 0\.\." || fail "no P=2 $c rule from 0 bytes: $out"
    done
    echo "$out" | grep -q "allgather P 3\.\.3 bytes 0\.\..* -> ring" || fail "P=3 rule lost: $out"
    [ "$(echo "$out" | grep -c 'allreduce P 2')" = 1 ] || fail "allreduce rule not kept once: $out"
    "$RUN" -n 2 "$TUNE" --quick --rules --coll allgather,bogus --out "$TMP/x.json" \
        > "$TMP/out" 2>&1 && fail "--coll bogus accepted"
    grep -q "'bogus' is not one of" "$TMP/out" || fail "--coll message: $(cat "$TMP/out")"
    ;;
bench_interleaved)
    # collie-bench --algo all,auto --repeat 2 (what bench/auto_quality.sh runs): per size,
    # every algorithm and auto twice, sizes outermost
    "$RUN" -n 2 "$BENCH" --coll allreduce --algo all,auto --repeat 2 --min-bytes 8 \
        --max-bytes 64 --step-factor 8 --iters 5 --csv "$TMP/b.csv" > "$TMP/out" 2>&1 \
        || fail "exit status: $(cat "$TMP/out")"
    [ "$(grep -c '^allreduce,auto,' "$TMP/b.csv")" = 4 ] || fail "auto rows: $(cat "$TMP/b.csv")"
    n=$(tail -n +2 "$TMP/b.csv" | cut -d, -f2 | sort -u | wc -l)
    [ "$n" -ge 5 ] || fail "only $n algorithms measured: $(cat "$TMP/b.csv")"
    # every algorithm twice per size, and all rows of 8 bytes before those of 64
    tail -n +2 "$TMP/b.csv" | awk -F, '{ c[$2 " " $5]++; if ($5 == 8 && seen64) bad = 1; if ($5 == 64) seen64 = 1 }
        END { for (k in c) if (c[k] != 2) bad = 1; exit bad }' || fail "not interleaved: $(cat "$TMP/b.csv")"
    ;;
one_rank)
    out=$("$RUN" -n 1 "$TUNE" --quick --out "$TMP/t.json" 2>&1) && fail "ran on one rank"
    echo "$out" | grep -q "needs at least 2 ranks" || fail "message: $out"
    [ ! -e "$TMP/t.json" ] || fail "wrote a file"
    ;;
usage)
    "$TUNE" --help | grep -q -- '--quick' || fail "--help"
    "$TUNE" --bogus > /dev/null 2>&1 && fail "accepted --bogus"
    [ $? = 2 ] || fail "exit status for --bogus"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok $CASE"
