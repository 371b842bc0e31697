#!/usr/bin/env bash
# at_scale.sh — predicted allreduce time at scale (issue #4, item 8): every algorithm and
# `auto` (the library's selection) from collie-sim predict, next to the α-β-γ lower bound
#   max(⌈log2 P⌉·f_α·α, 2(P−1)/P·n·f_β·β + (P−1)/P·n·γ)
# and the ratio auto / bound, as a markdown table (docs/performance.md).
#
#   bash bench/at_scale.sh [--P LIST] [--bytes LIST] [--model FILE] [--tuning FILE]
#                          [--csv FILE] [--build DIR] [--jobs N]
#
# Defaults: P = 2^4 … 2^16 and the non-powers 3·2^k, 2^k+1 listed below; 8 B, 64 KiB,
# 16 MiB; the simulator's built-in model (printed first).  --csv keeps the raw output.
# --jobs N (default 2) algorithms are simulated at the same time.
# The simulator picks its method per point (full, symmetric or closed form; see
# docs/simulator.md); the method of every number is in the CSV.
set -euo pipefail
cd "$(dirname "$0")/.."
P_LIST=16,17,32,48,64,128,256,257,512,768,1024,2048,4096,4097,8192,12288,16384,32768,49152,65536,65537
BYTES=8,64K,16M
MODEL=""
TUNING=""
CSV=""
BUILD=build
JOBS=2
while [ $# -gt 0 ]; do
  case $1 in
    --P) P_LIST=$2; shift 2 ;;
    --bytes) BYTES=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --tuning) TUNING=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) echo "at_scale.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
SIM=$BUILD/collie-sim
[ -x "$SIM" ] || { echo "at_scale.sh: $SIM not found (build first: cmake -B build && cmake --build build)" >&2; exit 2; }
model_opt=()
[ -n "$MODEL" ] && model_opt=(--model "$MODEL")
tuning_opt=()
[ -n "$TUNING" ] && tuning_opt=(--tuning "$TUNING")

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$SIM" model "${model_opt[@]}" > "$TMP/model"
algos=$("$SIM" predict --coll allreduce --algo all --P 2 --bytes 8 --csv | tail -n +2 | cut -d, -f1)
export SIM P_LIST BYTES TMP
printf '%s\n' $algos | xargs -P "$JOBS" -I{} sh -c \
    '"$SIM" predict --coll allreduce --algo {} --P "$P_LIST" --bytes "$BYTES" --csv "$@" \
         | tail -n +2 > "$TMP/{}.csv"' sh "${model_opt[@]}"
{ echo "algorithm,P,bytes,time_us,method,messages,events,note"
  for a in $algos; do cat "$TMP/$a.csv"; done; } > "$TMP/all.csv"
"$SIM" predict --coll allreduce --algo auto --P "$P_LIST" --bytes "$BYTES" --csv \
    "${model_opt[@]}" "${tuning_opt[@]}" | tail -n +2 > "$TMP/auto.csv"
cat "$TMP/all.csv" "$TMP/auto.csv" > "$TMP/out.csv"
[ -n "$CSV" ] && cp "$TMP/out.csv" "$CSV"

echo "Model (collie-sim model${MODEL:+ --model $MODEL}): $(grep -E '^(model|alpha|beta|f_alpha|f_beta|gamma) ' "$TMP/model" | tr '\n' ' ' | sed 's/ = /=/g')"
echo
awk -F, -v modelfile="$TMP/model" '
function bound(P, n,   lg, lat, bw) {
    lg = 0; while ((2 ^ lg) < P) lg++;
    lat = lg * m["f_alpha"] * m["alpha"];
    bw = 2 * (P - 1) / P * n * m["f_beta"] * m["beta"] + (P - 1) / P * n * m["gamma"];
    return (lat > bw ? lat : bw) * 1e6;
}
function size(n) {
    if (n >= 1048576 && n % 1048576 == 0) return (n / 1048576) " MiB";
    if (n >= 1024 && n % 1024 == 0) return (n / 1024) " KiB";
    return n " B";
}
function num(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x); }
BEGIN { while ((getline line < modelfile) > 0) { split(line, kv, " = "); m[kv[1]] = kv[2] } }
NR == 1 { next }
{
    key = $2 SUBSEP $3
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    if ($1 == "auto") { autot[key] = $4; note = $8; sub(/^chose /, "", note); autoc[key] = note; next }
    if (!($1 in known)) { known[$1] = 1; algos[++na] = $1 }
    t[$1, key] = $4; meth[$1, key] = $5
}
END {
    printf "| P | size |"
    for (i = 1; i <= na; i++) printf " %s |", algos[i]
    printf " auto (chose) | bound | auto / bound |\n|---|---|"
    for (i = 1; i <= na + 3; i++) printf "---|"
    printf "\n"
    for (k = 1; k <= nk; k++) {
        split(keys[k], pb, SUBSEP)
        printf "| %s | %s |", pb[1], size(pb[2])
        best = ""
        for (i = 1; i <= na; i++) {
            x = t[algos[i], keys[k]]
            if (x != "" && (best == "" || x + 0 < best + 0)) best = x
        }
        for (i = 1; i <= na; i++) {
            x = t[algos[i], keys[k]]
            mark = meth[algos[i], keys[k]] == "closed" ? "ᶜ" : meth[algos[i], keys[k]] == "symmetric" ? "ˢ" : ""
            if (x == "") printf " – |"
            else if (x == best) printf " **%s**%s |", num(x), mark
            else printf " %s%s |", num(x), mark
        }
        b = bound(pb[1], pb[2])
        a = autot[keys[k]]
        printf " %s (%s) | %s | %s |\n", a == "" ? "–" : num(a), autoc[keys[k]], num(b), a == "" ? "–" : sprintf("%.2f", a / b)
    }
}' "$TMP/out.csv"
echo
echo "µs; fastest in bold; ᶜ closed form, ˢ symmetric method (docs/simulator.md), others full simulation; – declined."
