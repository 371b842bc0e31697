#!/usr/bin/env bash
# Installs what collie needs to build and test on Debian/Ubuntu when it is missing
# (you need root or sudo for that), then configures and builds into ${BUILD_DIR:-build}.
# Options via environment:
#   WITH_MPI=1          also install Open MPI and MPICH (libcollie_mpi, the mpi tests,
#                       bench/compare); scripts/test.sh sets it unless WITH_MPI=0
#   COLLIE_SANITIZE=1   build with AddressSanitizer + UndefinedBehaviorSanitizer
#   COLLIE_WERROR=1     warnings are errors (CI sets this)
# PyTorch (for the opt-in torch backend tests, COLLIE_TORCH_TESTS=1 / scripts/test-torch.sh)
# is not installed here: the test python.torch.install puts it into the Python tests' venv
# with scripts/torch-install.sh (2.3 GB of wheels from PyPI, cached in ~/.cache/collie-torch).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(build-essential)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)   # the install test (tests/install)
command -v python3 >/dev/null || need+=(python3)   # bench/compare (its smoke test runs in the suite)
command -v pkg-config >/dev/null || need+=(pkg-config)
pkg-config --exists libsodium 2>/dev/null || need+=(libsodium-dev)   # multicast datagram MACs
# The Python package's tests (tests/python): a venv of Debian's python3 with its numpy and
# pytest; the package's extension needs Python.h; pip builds it with setuptools + wheel.
for m in venv:python3-venv numpy:python3-numpy pytest:python3-pytest \
         setuptools:python3-setuptools wheel:python3-wheel; do
  /usr/bin/python3 -c "import ${m%%:*}" 2>/dev/null || need+=("${m#*:}")
done
[ -f "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)/Python.h" ] \
  || need+=(python3-dev)
if [ "${WITH_MPI:-0}" = 1 ]; then
  command -v mpicc.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
  command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
  python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)   # bench/compare's venvs
  [ -e /usr/lib/x86_64-linux-gnu/libhwloc.so ] || [ -e /usr/include/hwloc.h ] ||
    need+=(libhwloc-dev)   # bench/compare's oneCCL benchmark links the wheel's static libccl.a
  /usr/bin/python3 -c 'import mpi4py' 2>/dev/null || need+=(python3-mpi4py)   # tests/python
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The MPI-5 standard ABI (libcollie_mpi's "abi" build and its tests mpi.abi.*): MPICH 5.0.2
# from PyPI (a 13 MB wheel, 61 MB installed, about 20 s) in a venv where CMake looks for
# mpicc_abi (COLLIE_MPI_ABI_ROOT).  Without it (no network) that build and tests are skipped.
if [ "${WITH_MPI:-0}" = 1 ]; then
  abi=${COLLIE_MPI_ABI_ROOT:-$HOME/.cache/collie-mpi-abi}
  if [ ! -x "$abi/bin/mpicc_abi" ]; then
    echo "setup: MPICH 5.0.2 (the MPI-5 standard ABI) from PyPI into $abi"
    { /usr/bin/python3 -m venv "$abi" && "$abi/bin/pip" install -q mpich==5.0.2; } ||
      echo "setup: could not install MPICH 5 from PyPI: no libcollie_mpi for the standard ABI"
  fi
fi

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOLLIE_WERROR="$([ "${COLLIE_WERROR:-0}" = 1 ] && echo ON || echo OFF)" \
  -DCOLLIE_SANITIZE="$([ "${COLLIE_SANITIZE:-0}" = 1 ] && echo ON || echo OFF)" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
