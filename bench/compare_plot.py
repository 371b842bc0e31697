"""compare_plot.py — PNG plots of bench/compare's summary.csv (run with the virtual
environment's python, which has matplotlib):

  python compare_plot.py SUMMARY_CSV OUT_DIR

<coll>_<data>.png: latency vs message size with reused or fresh data, one panel per team
size P, one line per library (collie, and dotted with collie_alloc buffers, dash-dotted
under the shared heap; each peer's auto, solid; each peer's best forced algorithm per size,
dashed).
ratio.png: collie / best peer vs size, one line per (collective, P, data).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PEERS = ("openmpi", "mpich", "intelmpi", "openmpi5", "mpich5", "oneccl")
COLORS = {"collie": "black", "openmpi": "tab:blue", "mpich": "tab:orange", "intelmpi": "tab:green",
          "openmpi5": "tab:purple", "mpich5": "tab:brown", "oneccl": "tab:red"}


def number(text):
    return float(text) if text not in ("", None) else None


def series(rows, column):
    pts = [(int(r["bytes"]), number(r.get(column))) for r in rows]
    return [p for p in pts if p[1] is not None]


def draw_line(ax, pts, label, color, style):
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label,
                marker="o", markersize=3, linewidth=2 if label == "collie" else 1.2)


def size_label(x, _pos=None):
    for unit, shift in (("M", 20), ("K", 10)):
        if x >= 1 << shift:
            return f"{x / (1 << shift):g}{unit}"
    return f"{x:g}"


def plot_coll(coll, data, rows, out_dir):
    teams = sorted({int(r["P"]) for r in rows})
    cols = 2 if len(teams) > 1 else 1
    nrows = math.ceil(len(teams) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.5 * cols, 4.5 * nrows), squeeze=False)
    for ax, team in zip(axes.flat, teams):
        mine = [r for r in rows if int(r["P"]) == team]
        draw_line(ax, series(mine, "collie_us"), "collie", COLORS["collie"], "-")
        draw_line(ax, series(mine, "collie_alloc_us"), "collie, collie_alloc buffers",
                  COLORS["collie"], ":")
        draw_line(ax, series(mine, "collie_heap_us"), "collie, shared heap",
                  COLORS["collie"], "-.")
        for peer in PEERS:
            draw_line(ax, series(mine, f"{peer}_auto_us"), f"{peer} auto", COLORS[peer], "-")
            draw_line(ax, series(mine, f"{peer}_forced_us"), f"{peer} best forced",
                      COLORS[peer], "--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(size_label))
        reduces = coll in ("allreduce", "reduce", "reduce_scatter_block")
        ax.set_title(f"{coll}, P = {team}, float64" + (" sum" if reduces else "") +
                     (", root 0" if coll in ("reduce", "bcast") else "") + f", {data} data")
        per_block = coll not in ("allreduce", "reduce", "bcast")
        ax.set_xlabel("message size (bytes" + (", per block)" if per_block else ")"))
        ax.set_ylabel("µs per call (slowest rank)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(teams):]:
        ax.set_visible(False)
    fig.tight_layout()
    path = os.path.join(out_dir, f"{coll}_{data}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ratio(rows, out_dir):
    fig, ax = plt.subplots(figsize=(8, 5))
    keys = sorted({(r["coll"], int(r["P"]), r["data"]) for r in rows})
    for coll, team, data in keys:
        pts = series([r for r in rows if (r["coll"], int(r["P"]), r["data"]) == (coll, team, data)],
                     "ratio")
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    linestyle="-" if data == "reused" else "--", label=f"{coll} P={team} {data}")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(size_label))
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("collie / best peer (below 1: collie faster)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = os.path.join(out_dir, "ratio.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(summary_csv, out_dir):
    with open(summary_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    paths = []
    for coll, data in dict.fromkeys((r["coll"], r["data"]) for r in rows):
        mine = [r for r in rows if r["coll"] == coll and r["data"] == data]
        paths.append(plot_coll(coll, data, mine, out_dir))
    paths.append(plot_ratio(rows, out_dir))
    print("compare: plots " + " ".join(paths))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: compare_plot.py SUMMARY_CSV OUT_DIR")
    main(sys.argv[1], sys.argv[2])
