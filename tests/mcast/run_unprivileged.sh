#!/usr/bin/env bash
# run_unprivileged.sh — the multicast broadcast on loopback without any privilege: as
# root, runs mp_mcast as user nobody (setpriv); otherwise as the current user.  16 ranks,
# no loss and half the datagrams dropped.  Exits 77 (ctest: skipped) when nobody cannot
# reach the binaries (e.g. a checkout under /root).
#
#   run_unprivileged.sh COLLIE_RUN MP_MCAST
set -u
run=$(readlink -f "$1") prog=$(readlink -f "$2")
as_user=()
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || { echo "skipped: no setpriv"; exit 77; }
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as_user[@]}" test -x "$run" -a -x "$prog" ||
        { echo "skipped: user nobody cannot run $run / $prog"; exit 77; }
fi
echo "running as uid $("${as_user[@]}" id -u)"
failed=0
for drop in 0 0.5; do
    expect=any
    [ "$drop" = 0 ] && expect=mcast
    out=$(cd /tmp && "${as_user[@]}" env COLLIE_BCAST_ALGO=mcast COLLIE_MCAST_DROP=$drop \
          COLLIE_TIMEOUT_MS=30000 "$run" -n 16 --timeout 240 -- "$prog" --expect $expect 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "PASS  P=16 drop=$drop  $(grep -m1 'fragments by multicast' <<<"$out")"
    else
        failed=1
        echo "FAIL  P=16 drop=$drop (exit $rc)"
        grep -E 'FAIL|error' <<<"$out" | head -n 20 | sed 's/^/    /'
    fi
done
exit $failed
