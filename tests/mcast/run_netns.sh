#!/usr/bin/env bash
# run_netns.sh — the multicast broadcast across 4 network namespaces joined by a Linux
# bridge (netns_lib.sh): rank r runs in namespace r % 4 and multicasts on that namespace's
# veth (MTU 1500, so 1424-byte fragments), while stage 2 still uses shared memory (all
# ranks are processes of this machine).  Needs root and `ip netns`; exits 77 (ctest:
# skipped) with a message otherwise.  The namespaces are private to this run and always
# deleted (trap).
#
#   run_netns.sh COLLIE_RUN MP_MCAST [P ...]          (default P: 4 8)
#
# With no injected loss the data must (partly) arrive by multicast — i.e. it crossed the
# bridge — and with COLLIE_MCAST_DROP=0.5 stage 2 must repair the rest.
set -u
run="$1" prog="$(readlink -f "$2")"
shift 2
sizes="${*:-4 8}"
. "$(dirname "$0")/netns_lib.sh"

why=$(netns_check) || { echo "skipped: $why"; exit 77; }
tag="cmc$$"
work=$(mktemp -d "${TMPDIR:-/tmp}/collie-netns.XXXXXX") || exit 2
trap 'netns_down "$tag"; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
if ! ip netns add "$tag-probe" 2>"$work/err"; then
    echo "skipped: cannot create a network namespace: $(cat "$work/err")"
    exit 77
fi
ip netns del "$tag-probe"
netns_up "$tag" "$work" || { echo "FAIL: cannot set up the namespaces"; exit 1; }

failed=0
for p in $sizes; do
    for drop in 0 0.5; do
        expect=any
        [ "$drop" = 0 ] && expect=mcast
        log="$work/P$p.drop$drop.log"
        COLLIE_BCAST_ALGO=mcast COLLIE_MCAST_DROP=$drop COLLIE_TIMEOUT_MS=30000 COLLIE_LOG=info \
            "$run" -n "$p" --timeout 240 -- "$work/wrap.sh" "$prog" \
            --iters 2 --expect "$expect" >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ] && grep -q "multicast group .* on eth0" "$log"; then
            echo "PASS  P=$p drop=$drop  $(grep -m1 'fragments by multicast' "$log")"
        else
            failed=1
            echo "FAIL  P=$p drop=$drop (exit $rc)"
            grep -E 'FAIL|error|warn|multicast' "$log" | head -n 20 | sed 's/^/    /'
        fi
    done
done
exit $failed
