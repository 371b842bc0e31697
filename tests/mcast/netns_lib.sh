# netns_lib.sh — sourced by tests/mcast/run_netns.sh and bench/mcast_figures.sh: four
# network namespaces TAG-n0..n3, each with a veth "eth0" (10.250.0.10-13/24, MTU 1500) whose
# peer is a port of bridge br0 in namespace TAG-hub.  Only addresses inside these private
# namespaces are used; nothing changes in the host namespace.  Needs root and iproute2.
#
#   netns_check             prints why not and returns 1 when namespaces cannot be made
#   netns_up TAG DIR        creates them, waits until every bridge port forwards, writes
#                           DIR/wrap.sh: run under collie-run, it execs "$@" in namespace
#                           TAG-n$((COLLIE_RANK % 4)) with COLLIE_MCAST_IF=eth0
#   netns_down TAG          deletes them (and with them the veths and the bridge)

netns_check() {
    [ "$(id -u)" = 0 ] || { echo "not root (network namespaces need CAP_NET_ADMIN)"; return 1; }
    command -v ip >/dev/null || { echo "no ip command (iproute2)"; return 1; }
    command -v bridge >/dev/null || { echo "no bridge command (iproute2)"; return 1; }
    return 0
}

netns_down() {
    local tag="$1" i
    for i in 0 1 2 3; do ip netns del "$tag-n$i" 2>/dev/null; done
    ip netns del "$tag-hub" 2>/dev/null
    return 0
}

netns_up() {
    local tag="$1" dir="$2" hub="$1-hub" i ns
    ip netns add "$hub" || return 1
    ip -n "$hub" link set lo up &&
    ip -n "$hub" link add br0 type bridge &&
    ip -n "$hub" link set br0 up || return 1
    for i in 0 1 2 3; do
        ns="$tag-n$i"
        ip netns add "$ns" &&
        ip -n "$ns" link set lo up &&
        ip -n "$ns" link add eth0 type veth peer name "vh$i" &&
        ip -n "$ns" link set "vh$i" netns "$hub" &&
        ip -n "$ns" addr add "10.250.0.1$i/24" dev eth0 &&
        ip -n "$ns" link set eth0 up &&
        ip -n "$hub" link set "vh$i" master br0 &&
        ip -n "$hub" link set "vh$i" up || return 1
    done
    # A new bridge port stays "disabled"/"learning" for about a second: multicast sent
    # before it forwards is lost silently.
    for _ in $(seq 100); do
        [ "$(bridge -n "$hub" link show | grep -c 'state forwarding')" -ge 4 ] && break
        sleep 0.1
    done
    if [ "$(bridge -n "$hub" link show | grep -c 'state forwarding')" -lt 4 ]; then
        echo "bridge ports never reached forwarding:"; bridge -n "$hub" link show
        return 1
    fi
    cat >"$dir/wrap.sh" <<WRAP
#!/bin/sh
exec ip netns exec "$tag-n\$((COLLIE_RANK % 4))" env COLLIE_MCAST_IF=eth0 "\$@"
WRAP
    chmod +x "$dir/wrap.sh"
}
