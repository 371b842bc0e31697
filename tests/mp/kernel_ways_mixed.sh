#!/bin/sh
# kernel_ways_mixed.sh PROG [ARGS...] — runs PROG (under collie-run) with rank 0 sending its
# large messages by the kernel copy (COLLIE_SHM_KERNEL_MIN=1) and every other rank in user
# space (COLLIE_SHM_KERNEL_MIN=0): each rank chooses the way of the messages it sends in the
# schedules of collectives without an op, and a receiver must follow what arrives
# (core/executor.c follow_sender).  Rank 0's setting is also the job's (the direct-access
# drivers and the reductions' schedules: the kernel copy from 1 byte).
if [ "${COLLIE_RANK:-0}" = 0 ]; then
    COLLIE_SHM_KERNEL_MIN=1
else
    COLLIE_SHM_KERNEL_MIN=0
fi
export COLLIE_SHM_KERNEL_MIN
exec "$@"
