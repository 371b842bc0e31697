#!/bin/bash
# test_collie_sim.sh SIM CASE — one test of the collie-sim tool (see CMakeLists.txt).
# Expected values are computed by hand from the model file written below.
set -u
SIM=$1
CASE=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL $CASE: $*"; exit 1; }

# alpha 1 us, beta = gamma = 1 ns/byte, f = 0.5: recursive doubling P=4 with 1000 bytes
# (125 doubles) costs 2 (alpha + n beta + n gamma) = 6 us.
printf 'alpha = 1e-6\nbeta = 1e-9\ngamma = 1e-9\ncopy = 1e-9\nf_alpha = 0.5\nf_beta = 0.5\n' \
    > "$TMP/hand.model"

case $CASE in
predict_value)
    out=$("$SIM" predict --coll allreduce --algo recursive_doubling --P 4 --bytes 1000 \
          --model "$TMP/hand.model") || fail "exit status"
    echo "$out" | grep -Eq '^recursive_doubling +4 +1000 +6\.000 ' || fail "expected 6.000 us: $out"
    ;;
predict_csv)
    out=$("$SIM" predict --coll bcast --algo all --P 2,3,8 --bytes 1K,64K --csv) || fail "exit"
    echo "$out" | head -1 | grep -q '^algorithm,P,bytes,time_us,method' || fail "header: $out"
    n=$(echo "$out" | grep -c '^binomial,')
    [ "$n" = 6 ] || fail "expected 6 binomial rows, got $n: $out"
    # binomial bcast P=2, 1024 bytes: one one-directional message 0.5 + 0.512 us
    out=$("$SIM" predict --coll bcast --algo binomial --P 2 --bytes 1K --csv --model "$TMP/hand.model")
    echo "$out" | grep -q '^binomial,2,1024,1\.0120,' || fail "binomial P=2: $out"
    ;;
predict_symmetric)
    # ring at P = 65536: the symmetric run (rank 0 only) and the closed form agree (auto
    # takes the closed form) within one segment's reduction
    sym=$("$SIM" predict --coll allreduce --algo ring --P 65536 --bytes 4M --method symmetric \
          --csv) || fail "exit"
    echo "$sym" | grep -Eq '^ring,65536,4194304,[0-9.]+,symmetric' || fail "ring 65536: $sym"
    auto=$("$SIM" predict --coll allreduce --algo ring --P 65536 --bytes 4M --csv) || fail "exit"
    echo "$auto" | grep -Eq '^ring,65536,4194304,[0-9.]+,closed' || fail "ring 65536: $auto"
    a=$(echo "$sym" | tail -1 | cut -d, -f4)
    b=$(echo "$auto" | tail -1 | cut -d, -f4)
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 0.01 && d > -0.01) }' \
        || fail "symmetric $a us, closed form $b us"
    ;;
verify_ok)
    "$SIM" verify --coll allreduce --algo all --max-p 9 > "$TMP/out" 2>&1 || fail "$(cat "$TMP/out")"
    "$SIM" verify --coll bcast --algo all --max-p 9 > "$TMP/out" 2>&1 || fail "$(cat "$TMP/out")"
    ;;
verify_fault)
    "$SIM" verify --coll allreduce --algo recursive_doubling --max-p 5 --inject-fault 1 \
        > "$TMP/out" 2>&1 && fail "a broken schedule passed"
    grep -q '^FAIL recursive_doubling P=2 n=-: .*rank 1' "$TMP/out" || fail "$(cat "$TMP/out")"
    grep -q 'P=5' "$TMP/out" || fail "P=5 not reported: $(cat "$TMP/out")"
    ;;
draw)
    "$SIM" draw --coll allreduce --algo recursive_doubling --P 4 --bytes 32 -o "$TMP/rd.svg" \
        || fail "exit status"
    grep -q '<svg' "$TMP/rd.svg" || fail "no svg"
    n=$(grep -c "marker-end=" "$TMP/rd.svg")
    [ "$n" = 8 ] || fail "expected 8 message arrows (P=4: 2 exchanges per rank), got $n"
    # contribution labels: the first exchange carries one input, the second two
    grep -q '>x1<' "$TMP/rd.svg" || fail "no label x1 of the first exchange"
    grep -q '>x2\.\.3<' "$TMP/rd.svg" || fail "no label x2..3 of the second exchange"
    # ring P=3, 6 elements: reduce-scatter sends single inputs' segments, the allgather
    # reduced segments x0..2
    "$SIM" draw --coll allreduce --algo ring --P 3 --bytes 48 -o "$TMP/ring.svg" || fail "ring"
    grep -q '>x2\[0:2)<' "$TMP/ring.svg" || fail "no label x2[0:2): $(grep -o '>x[^<]*<' "$TMP/ring.svg")"
    n=$(grep -c '>x0\.\.2\[' "$TMP/ring.svg")
    [ "$n" = 6 ] || fail "expected 6 allgather messages labelled x0..2[…), got $n"
    # pairwise exchange P=5: leftover rank 4's input joins rank 0's, so sets have gaps
    "$SIM" draw --coll allreduce --algo pairwise_exchange --P 5 --bytes 8 -o "$TMP/pe.svg" \
        || fail "pairwise_exchange"
    grep -q '>x{0,4}<' "$TMP/pe.svg" && grep -q '>x{0\.\.1,4}<' "$TMP/pe.svg" \
        || fail "no labels x{0,4}, x{0..1,4}: $(grep -o '>x[^<]*<' "$TMP/pe.svg")"
    ;;
draw_labels)
    # labels never overlap, from 2 to 64 ranks, with contribution sets and byte ranges;
    # every message keeps its label, on its arrow or in the table beside the drawing
    here=$(dirname "$0")
    for spec in "ring 2 16" "ring 5 40" "pairwise_exchange 5 8" "bruck 16 64" "ring 8 2048" \
                "recursive_doubling 64 512" "ring 32 256"; do
        set -- $spec
        "$SIM" draw --coll allreduce --algo "$1" --P "$2" --bytes "$3" -o "$TMP/l.svg" > /dev/null \
            || fail "$spec: exit status"
        python3 "$here/check_draw_labels.py" "$TMP/l.svg" || fail "$spec"
    done
    "$SIM" draw --coll bcast --algo binomial --P 13 --bytes 64 -o "$TMP/b.svg" > /dev/null || fail "bcast"
    python3 "$here/check_draw_labels.py" "$TMP/b.svg" || fail "bcast binomial 13"
    grep -q 'arrow: one message' "$TMP/b.svg" || fail "no legend"
    ;;
predict_auto)
    out=$("$SIM" predict --coll allreduce --algo auto --P 2,8 --bytes 8,16M --csv) || fail "exit"
    n=$(echo "$out" | grep -c '^auto,.*,chose [a-z_]*$')
    [ "$n" = 4 ] || fail "expected 4 auto rows naming the chosen algorithm: $out"
    # a root with P - 1 operations counts once in the method's estimate: flat bcast at
    # P = 65536 is a full run of 65535 messages, not refused
    out=$("$SIM" predict --coll bcast --algo flat --P 65536 --bytes 8 --csv) || fail "exit"
    echo "$out" | grep -Eq '^flat,65536,8,[0-9.]+,full,65535' || fail "flat bcast 65536: $out"
    ;;
predict_closed)
    # flat P = 4, 1000 bytes, hand model: messages to rank +1 and +3 one-directional
    # (0.5 + 0.5 us each), the one to rank +2 both ways at once (1 + 1 us), then a
    # 4-source reduction of 3 x 1 us: 7 us
    out=$("$SIM" predict --coll allreduce --algo flat --P 4 --bytes 1000 --elem 1 --csv \
          --method closed --model "$TMP/hand.model") || fail "exit"
    echo "$out" | grep -q '^flat,4,1000,7\.0000,closed' || fail "flat closed form: $out"
    full=$("$SIM" predict --coll allreduce --algo flat --P 4 --bytes 1000 --elem 1 --csv \
          --method full --model "$TMP/hand.model") || fail "exit"
    echo "$full" | grep -q '^flat,4,1000,7\.0000,full' || fail "flat full: $full"
    out=$("$SIM" predict --coll allreduce --algo ring_pipelined --P 65536 --bytes 64K) || fail "exit"
    echo "$out" | grep -Eq '^ring_pipelined +65536 +65536 +[0-9.]+ +closed' || fail "ring_pipelined 65536: $out"
    ;;
usage)
    "$SIM" > /dev/null 2>&1 && fail "no arguments accepted"
    "$SIM" predict --coll nope --algo x > /dev/null 2>&1 && fail "bad collective accepted"
    "$SIM" --help | grep -q 'collie-sim predict' || fail "no usage"
    "$SIM" draw --coll allreduce --algo ring --P 30000 -o "$TMP/big.svg" > "$TMP/out" 2>&1 \
        && fail "draw of 30000 ranks accepted"
    grep -q 'at most 1024' "$TMP/out" || fail "draw --P 30000: $(cat "$TMP/out")"
    "$SIM" verify --coll allreduce --algo ring --max-p 100000 > "$TMP/out" 2>&1 \
        && fail "verify up to 100000 ranks accepted"
    grep -q 'max-p must be 1 ... 4096.*not 100000' "$TMP/out" || fail "verify --max-p 100000: $(cat "$TMP/out")"
    ;;
*) fail "unknown case" ;;
esac
echo "ok $CASE"
