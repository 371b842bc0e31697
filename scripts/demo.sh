#!/usr/bin/env bash
# The demo: sets up and builds, then benchmarks every algorithm of every collective on 4
# ranks of this machine (collie-run + collie-bench), checking results as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
B=${BUILD_DIR:-build}
P=${P:-4}
# Set up multicast at collie_init so that --algo all measures the multicast broadcast too.
export COLLIE_MCAST=${COLLIE_MCAST:-on}
for coll in allreduce reduce bcast barrier; do
  echo
  "$B/collie-run" -n "$P" -- "$B/collie-bench" --coll "$coll" --algo all \
    --min-bytes 8 --max-bytes 1M --step-factor 8 --check
done
