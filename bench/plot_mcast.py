"""plot_mcast.py CSV OUTDIR FIXED_P — Figures 5-7 of Hoefler et al. 2007 from the CSV of
bench/mcast_figures.sh (net,algorithm,P,rank,latency_us): per-rank latency at P = FIXED_P,
and the latency of rank 1 and of rank P-1 against P, one line per (algorithm, net)."""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"mcast": "o-", "binomial": "s--", "chain": "^:"}


def load(path):
    data = defaultdict(dict)  # (net, algo) -> {(P, rank): us}
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["net"], row["algorithm"])
            data[key][(int(row["P"]), int(row["rank"]))] = float(row["latency_us"])
    return data


def per_rank(data, fixed, out):
    fig, ax = plt.subplots(figsize=(7, 4))
    for (net, algo), pts in sorted(data.items()):
        ranks = sorted(r for (p, r) in pts if p == fixed)
        if ranks:
            ax.plot(ranks, [pts[(fixed, r)] for r in ranks], STYLE.get(algo, "x-"),
                    label=f"{algo} ({net})")
    ax.set(xlabel="rank", ylabel="latency (µs)",
           title=f"bcast of 2 bytes from rank 0: latency of each rank, P = {fixed}")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.savefig(f"{out}/fig5_per_rank_P{fixed}.png", dpi=120, bbox_inches="tight")


def versus_p(data, which, name, out):
    fig, ax = plt.subplots(figsize=(7, 4))
    for (net, algo), pts in sorted(data.items()):
        ps = sorted({p for (p, r) in pts if p > 1 and (p, which(p)) in pts})
        if ps:
            ax.plot(ps, [pts[(p, which(p))] for p in ps], STYLE.get(algo, "x-"),
                    label=f"{algo} ({net})")
    ax.set(xlabel="P (ranks)", ylabel="latency (µs)", title=f"bcast of 2 bytes: latency of {name}")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.savefig(f"{out}/{'fig6_rank1' if name == 'rank 1' else 'fig7_last_rank'}.png", dpi=120,
                bbox_inches="tight")


def main():
    path, out, fixed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = load(path)
    per_rank(data, fixed, out)
    versus_p(data, lambda p: 1, "rank 1", out)
    versus_p(data, lambda p: p - 1, "rank P-1", out)
    print(f"plot: wrote {out}/fig5_per_rank_P{fixed}.png, {out}/fig6_rank1.png, "
          f"{out}/fig7_last_rank.png")


if __name__ == "__main__":
    main()
