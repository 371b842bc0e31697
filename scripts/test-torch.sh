#!/usr/bin/env bash
# The torch.distributed backend's tests (ctest label torch), which scripts/test.sh skips:
# sets up and builds (scripts/setup.sh), installs PyTorch into the Python tests' venv
# (scripts/torch-install.sh, through the python.torch.install test), then runs the backend's
# pytest tests under collie-run at P = 1..4 and examples/torch_ddp.py (DDP with gloo and
# with collie, same losses).  Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
export COLLIE_TORCH_TESTS=1
bash scripts/setup.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -L torch "$@"
