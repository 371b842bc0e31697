#!/usr/bin/env bash
# netns_agent.sh HOST COMMAND... — Open MPI's "rsh agent" for the multi-host test: runs
# the daemon's COMMAND inside the network namespace of HOST (HOST = the namespace's name),
# with its own host name (a UTS namespace), as ssh would run it on another machine.
set -u
host=$1
shift
exec ip netns exec "$host" unshare --uts /bin/sh -c "hostname $host && exec $*"
