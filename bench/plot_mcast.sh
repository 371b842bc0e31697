#!/usr/bin/env bash
# bench/plot_mcast.sh CSV OUTDIR FIXED_P — plots bench/mcast_figures.sh's CSV with
# bench/plot_mcast.py.  matplotlib comes from PyPI into a venv (COLLIE_PLOT_VENV, default
# build/plot-venv); if that cannot be made, says so and exits 0 (plotting is optional).
set -uo pipefail
cd "$(dirname "$0")/.."
csv=$1 out=$2 fixed=$3
venv=${COLLIE_PLOT_VENV:-build/plot-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
  echo "plot: installing matplotlib into $venv (PyPI)"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib; } >"$venv.log" 2>&1; then
    echo "plot: CANNOT PLOT: no venv or matplotlib (python3-venv installed? network?); see $venv.log"
    echo "plot: the numbers are in $csv"
    exit 0
  fi
fi
"$venv/bin/python" bench/plot_mcast.py "$csv" "$out" "$fixed"
