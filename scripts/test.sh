#!/usr/bin/env bash
# The test command: sets up (scripts/setup.sh), builds, and runs the whole suite with
# ctest.  COLLIE_LONG_TESTS=1 runs the longer sweeps; COLLIE_SANITIZE=1 builds and runs
# everything under AddressSanitizer + UndefinedBehaviorSanitizer (in build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${COLLIE_SANITIZE:-0}" = 1 ]; then
  export BUILD_DIR=${BUILD_DIR:-build-asan}
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
fi
export WITH_MPI=${WITH_MPI:-1}   # the mpi tests need Open MPI and MPICH (WITH_MPI=0: skip them)
bash scripts/setup.sh
cd "${BUILD_DIR:-build}"
ctest -j "$(nproc)" --output-on-failure "$@"
