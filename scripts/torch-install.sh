#!/usr/bin/env bash
# torch-install.sh VENV — PyTorch into a virtual environment for the collie backend's tests
# (CPU use only), from PyPI, with the wheels kept in ~/.cache/collie-torch (a second run
# downloads nothing).
#
# PyPI has only the CUDA build of torch for Linux x86_64 (download.pytorch.org's CPU wheels
# may be unreachable), and importing it loads the CUDA libraries it is linked to even on a
# machine without a GPU.  So this installs torch with --no-deps plus exactly the NVIDIA
# wheels holding those libraries (not triton, cusolver, cuda-bindings, ...) and torch's
# pure-Python dependencies.  Measured on Debian 12 (Python 3.11, a loaded 2-core machine):
# 2.3 GB of wheels (torch 0.54 GB, cudnn 0.52, cublas 0.40, ...), 200 s from scratch
# (download and install), 50 s with the wheels cached; the venv then takes 4 GB.  That is why
# the torch tests are opt-in (COLLIE_TORCH_TESTS=1).
# Versions are pinned: torch and the CUDA libraries it was built against.
set -euo pipefail
venv=${1:?usage: torch-install.sh VENV}
py=$venv/bin/python
check='import torch, torch.distributed as d; assert d.is_available(); print(torch.__version__)'
if version=$("$py" -c "$check" 2>/dev/null); then
  echo "torch-install: torch $version is already in $venv"
  exit 0
fi
wheels=(
  torch==2.15.0
  nvidia-cuda-runtime==13.2.86 nvidia-cuda-nvrtc==13.2.86 nvidia-cuda-cupti==13.2.86
  nvidia-cublas==13.4.1.3 nvidia-cudnn-cu13==9.26.0.51 nvidia-cufft==12.2.0.57
  nvidia-cufile==1.17.1.22 nvidia-cusparse==12.7.10.12 nvidia-cusparselt-cu13==0.8.1
  nvidia-nvjitlink==13.5.37 nvidia-nccl-cu13==2.30.7 nvidia-nvshmem-cu13==3.7.2
  filelock==4.2.12 typing-extensions==4.16.0 sympy==1.14.0 mpmath==1.3.0
  networkx==3.6.1 jinja2==3.1.6 markupsafe==3.0.4 fsspec==2026.9.0
)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/collie-torch
mkdir -p "$cache"
pip=("$py" -m pip --disable-pip-version-check -q)
start=$(date +%s)
echo "torch-install: wheels into $cache"
"${pip[@]}" download --no-deps --only-binary=:all: -d "$cache" "${wheels[@]}"
echo "torch-install: installing into $venv"
"${pip[@]}" install --no-deps --no-index --find-links "$cache" "${wheels[@]}"
version=$("$py" -c "$check")
echo "torch-install: torch $version in $venv ($(du -sh "$cache" | cut -f1) of wheels in" \
     "$cache; $(( $(date +%s) - start )) s)"
