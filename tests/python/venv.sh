#!/usr/bin/env bash
# venv.sh SOURCE_DIR VENV CMAKE_BUILD_DIR — the Python tests' environment: a virtual
# environment (Debian's python3 with its numpy/pytest/mpi4py when scripts/setup.sh installed
# them, else numpy and pytest from PyPI), ml_dtypes from PyPI when reachable (else the
# bfloat16 test skips), and `pip install SOURCE_DIR` — the checkout built by its setup.py
# (CMake build kept in CMAKE_BUILD_DIR, so re-runs are incremental).
set -euo pipefail
src=$1 venv=$2 cmake_dir=$3
py=${COLLIE_TEST_PYTHON:-}
if [ -z "$py" ]; then
  py=python3
  if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy, pytest, venv' 2>/dev/null; then
    py=/usr/bin/python3
  fi
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "venv: $py -m venv --system-site-packages $venv"
  "$py" -m venv --system-site-packages "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
if ! "$venv/bin/python" -c 'import numpy, pytest' 2>/dev/null; then
  echo "venv: numpy and pytest from PyPI"
  "${pip[@]}" install numpy pytest
fi
if ! "$venv/bin/python" -c 'import ml_dtypes' 2>/dev/null; then
  # A version that works with the numpy we have (keeps Debian's numpy: no numpy download).
  numpy_version=$("$venv/bin/python" -c 'import numpy; print(numpy.__version__)')
  "${pip[@]}" install ml_dtypes "numpy==$numpy_version" ||
    echo "venv: no ml_dtypes (PyPI unreachable?): the bfloat16 test skips"
fi
isolation=()
if "$venv/bin/python" -c 'import setuptools, wheel' 2>/dev/null; then
  isolation=(--no-build-isolation)   # the build needs nothing from PyPI
fi
echo "venv: pip install $src"
COLLIE_PY_BUILD_DIR=$cmake_dir COLLIE_WERROR=${COLLIE_WERROR:-0} \
  "${pip[@]}" install "${isolation[@]}" --force-reinstall --no-deps "$src"
"$venv/bin/python" -c 'import collie; print("venv: collie from", collie.__file__)'
