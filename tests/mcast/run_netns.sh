#!/usr/bin/env bash
# run_netns.sh — the multicast broadcast across 4 network namespaces joined by a Linux
# bridge: rank r runs in namespace r % 4 and multicasts on that namespace's veth (MTU
# 1500, so 1424-byte fragments), while stage 2 still uses shared memory (all ranks are
# processes of this machine).  Needs root and `ip netns`; exits 77 (ctest: skipped) with a
# message otherwise.  The namespaces are private to this run and always deleted (trap).
#
#   run_netns.sh COLLIE_RUN MP_MCAST [P ...]          (default P: 4 8)
#
# With no injected loss the data must (partly) arrive by multicast — i.e. it crossed the
# bridge — and with COLLIE_MCAST_DROP=0.5 stage 2 must repair the rest.
set -u
run="$1" prog="$2"
shift 2
sizes="${*:-4 8}"

skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root (network namespaces need CAP_NET_ADMIN)"
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v bridge >/dev/null || skip "no bridge command (iproute2)"

tag="cmc$$"
hub="$tag-hub"
work=$(mktemp -d "${TMPDIR:-/tmp}/collie-netns.XXXXXX") || exit 2
cleanup() {
    for i in 0 1 2 3; do ip netns del "$tag-n$i" 2>/dev/null; done
    ip netns del "$hub" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$hub" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
set -e
ip -n "$hub" link set lo up
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
for i in 0 1 2 3; do
    ns="$tag-n$i"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ns" link add eth0 type veth peer name "vh$i"
    ip -n "$ns" link set "vh$i" netns "$hub"
    ip -n "$ns" addr add "10.250.0.1$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$hub" link set "vh$i" master br0
    ip -n "$hub" link set "vh$i" up
done
set +e

# A new bridge port stays "disabled"/"learning" for about a second: multicast sent before
# it forwards is lost silently.
for _ in $(seq 100); do
    [ "$(bridge -n "$hub" link show | grep -c 'state forwarding')" -ge 4 ] && break
    sleep 0.1
done
bridge -n "$hub" link show | grep -c 'state forwarding' | grep -qx 4 ||
    { echo "FAIL: bridge ports never reached forwarding"; bridge -n "$hub" link show; exit 1; }

# Per-rank wrapper: collie-run passes its environment (COLLIE_RANK, ...) through.
cat >"$work/wrap.sh" <<EOF
#!/bin/sh
ns="$tag-n\$((COLLIE_RANK % 4))"
exec ip netns exec "\$ns" env COLLIE_MCAST_IF=eth0 "\$@"
EOF
chmod +x "$work/wrap.sh"

failed=0
for p in $sizes; do
    for drop in 0 0.5; do
        expect=any
        [ "$drop" = 0 ] && expect=mcast
        log="$work/P$p.drop$drop.log"
        COLLIE_BCAST_ALGO=mcast COLLIE_MCAST_DROP=$drop COLLIE_TIMEOUT_MS=30000 COLLIE_LOG=info \
            "$run" -n "$p" --timeout 240 -- "$work/wrap.sh" "$(readlink -f "$prog")" \
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
