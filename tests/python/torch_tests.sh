#!/usr/bin/env bash
# torch_tests.sh install VENV | run COMMAND... — the torch.distributed backend's tests
# (label torch) are opt-in: without COLLIE_TORCH_TESTS=1 they exit 77 (skipped), since
# PyTorch is a large download (see scripts/torch-install.sh).
#   install VENV: PyTorch into the Python tests' venv (scripts/torch-install.sh)
#   run ...:      runs the command (a pytest run or a script under collie-run)
set -euo pipefail
if [ "${COLLIE_TORCH_TESTS:-0}" != 1 ]; then
  echo "SKIP: the torch tests are opt-in: COLLIE_TORCH_TESTS=1 (or scripts/test-torch.sh)"
  exit 77
fi
mode=$1
shift
case $mode in
  install) exec "$(dirname "$0")/../../scripts/torch-install.sh" "$1" ;;
  run) exec "$@" ;;
  *) echo "torch_tests.sh: unknown mode $mode" >&2; exit 2 ;;
esac
