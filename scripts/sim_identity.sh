#!/bin/bash
# sim_identity.sh SIM OUTDIR — records collie-sim's full-method predictions for every
# algorithm of every collective at small P (Hockney default model and a LogGP model), so
# that changes to the engine can be checked bit for bit: run it before and after, diff.
set -eu
SIM=${1:?usage: sim_identity.sh path/to/collie-sim OUTDIR}
OUT=${2:?usage: sim_identity.sh path/to/collie-sim OUTDIR}
mkdir -p "$OUT"
printf 'model = loggp\nL = 1.5e-6\no = 2e-7\ng = 3e-7\nG = 1e-10\n' > "$OUT/loggp.model"
for c in allreduce reduce bcast barrier; do
  for m in hockney loggp; do
    extra=()
    [ "$m" = loggp ] && extra=(--model "$OUT/loggp.model")
    "$SIM" predict --coll "$c" --algo all --P 2,3,4,5,7,8,13,16,31,64,100,257,1000 \
      --bytes 8,1K,64K,1M --method full --csv "${extra[@]}" > "$OUT/$c.$m.csv"
  done
done
