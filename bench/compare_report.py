#!/usr/bin/env python3
"""compare_report.py — the markdown tables of docs/performance.md from one or more
summary.csv files of bench/compare (rows of several runs are simply concatenated):

  python3 bench/compare_report.py [--colls "C ..."] build/runs/p2/summary.csv \
      build/runs/p4/summary.csv

0. Collective x team size, one column per size: collie (malloc) / best peer, reused /
   fresh (the compact tables of docs/performance.md).
1. Per point (collective, P, size), reused and fresh data side by side: collie (malloc
   buffers, auto's choice), the best peer (the fastest of every peer's auto and forced
   algorithms) and the ratio collie / best peer; the same ratio for collie_alloc buffers
   and for malloc buffers under the shared heap (when the run had it).
2. Per peer and data mode: at how many points collie (malloc buffers) is at or below that
   peer's best config, and the median and range of collie / peer.
3. Per team size and data mode: points at or below the best peer, at most 1.3 x, and
   every point above 1.3 x (collie with malloc buffers).
4. Per data mode (and per collective when there are several): points at or below the best
   peer, at most 1.3 x, and the worst ratio.
5. Issue 14's target for mapped buffers: collie_alloc (and the shared heap) at most
   0.6 x the best peer at every point from 512 KiB, with the points that miss it.
6. The machine's states (bench/compare_state.py): the best peer's state is named beside
   it, collie's time is its best run in that state, and points where collie had no run
   there say so.
7. When the run had a paired rematch (bench/compare --rematch N, compare_rematch.py): the
   tables of 0 and 3 again with the paired ratio (the median over rounds of collie / the
   best peer timed one right after the other), the first pass's ratio where a point had
   no rematch.
8. Issue 14's targets, met or not, per view (first pass; paired where the run had a
   rematch): collie (malloc) at or below the best peer at >= 90 % of points, never above
   1.3 x; collie_alloc or the shared heap at most 0.6 x from 512 KiB; at P = 2 allreduce
   2 MiB at most 0.85 x and bcast 2 and 8 MiB at most 1.0 x (where the run has them).

Any of bench/compare's collectives (allreduce, reduce, bcast, allgather,
reduce_scatter_block, alltoall); summary.csv files from before the shared-heap columns
read as runs without it.  --colls "allgather alltoall" keeps only those collectives.
"""
import csv
import statistics
import sys

PEERS = ("openmpi", "mpich", "intelmpi", "openmpi5", "mpich5", "oneccl")
NAMES = {"openmpi": "Open MPI 4.1.4", "mpich": "MPICH 4.0.2", "intelmpi": "Intel MPI 2021.18",
         "openmpi5": "Open MPI 5.0.11", "mpich5": "MPICH 5.0.2", "oneccl": "oneCCL 2022.2"}


def num(text):
    return float(text) if text not in ("", None) else None


def human(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def us(x):
    return "–" if x is None else (f"{x:.2f}" if x < 100 else f"{x:.0f}")


def ratio(x):
    if x is None:
        return "–"
    return f"**{x:.2f}**" if x <= 1.0 else f"{x:.2f}"


def peer_best(row, peer):
    got = [v for v in (num(row[f"{peer}_auto_us"]), num(row[f"{peer}_forced_us"])) if v]
    return min(got) if got else None


def load(paths, colls=None):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    return {(r["coll"], int(r["P"]), int(r["bytes"]), r["data"]): r for r in rows
            if not colls or r["coll"] in colls}


def has_heap(table):
    return any(num(r.get("ratio_shared_heap")) for r in table.values())


def ratios_of(table, key, column):
    """'reused / fresh' of one ratio column at a point (collective, P, size)."""
    return "/".join(ratio(num(table[key + (d,)].get(column))) if key + (d,) in table else "–"
                    for d in ("reused", "fresh"))


def point_table(table):
    heap = has_heap(table)
    print("| coll | P | size | reused: collie µs (algorithm) | best peer µs (which) | ratio |"
          " fresh: collie µs | best peer µs (which) | ratio | collie_alloc ratio reused / fresh |"
          + (" shared heap ratio reused / fresh |" if heap else ""))
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" +
          (" ---: |" if heap else ""))
    for coll, P, size in sorted({k[:3] for k in table}, key=lambda k: (k[0], k[1], k[2])):
        cells = []
        for data in ("reused", "fresh"):
            r = table.get((coll, P, size, data))
            if not r:
                cells += ["–", "–", "–"]
                continue
            mine = f"{us(num(r['collie_us']))}" + \
                (f" ({r['collie_algorithm']})" if data == "reused" else "")
            state = f", {r['best_peer_state']}" if r.get("best_peer_state") else ""
            best = f"{us(num(r['best_peer_us']))} ({r['best_peer']} {r['best_peer_config']}{state})"
            unmatched = " (collie not in that state)" if r.get("state_matched") == "no" else ""
            cells += [mine, best, ratio(num(r["ratio"])) + unmatched]
        cells.append(ratios_of(table, (coll, P, size), "ratio_collie_alloc"))
        if heap:
            cells.append(ratios_of(table, (coll, P, size), "ratio_shared_heap"))
        print(f"| {coll} | {P} | {human(size)} | " + " | ".join(cells) + " |")


def short_size(size):
    return human(size).replace(" ", "\u00a0")


def ratio_in(r, column):
    """The ratio of a summary record by `column`; the paired ratio falls back on the first
    pass's where the point had no rematch."""
    if column == "rematch_ratio" and num(r.get(column)) is None:
        column = "ratio"
    return num(r.get(column))


def matrix(table, column="ratio"):
    """Collective x team size rows, one column per size: collie (malloc) / best peer,
    reused / fresh ('*': the best peer ran in a state collie had no run in)."""
    for sizes_of in sorted({tuple(sorted({k[2] for k in table if k[1] == P and k[0] == c}))
                            for c, P in {k[:2] for k in table}}, key=len, reverse=True):
        rows = sorted({k[:2] for k in table
                       if tuple(sorted({j[2] for j in table if j[:2] == k[:2]})) == sizes_of})
        print("| coll | P | " + " | ".join(short_size(b) for b in sizes_of) + " |")
        print("| --- | ---: |" + " ---: |" * len(sizes_of))
        for coll, P in rows:
            cells = []
            for b in sizes_of:
                parts = []
                for d in ("reused", "fresh"):
                    r = table.get((coll, P, b, d))
                    x = ratio_in(r, column) if r else None
                    mark = "\\*" if r and r.get("state_matched") == "no" else ""
                    parts.append(ratio(x) + mark)
                cells.append(" / ".join(parts))
            print(f"| {coll} | {P} | " + " | ".join(cells) + " |")
        print()


def peer_table(table):
    print("| peer | data | points | collie ≤ peer | median collie / peer | range |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for peer in PEERS:
        for data in ("reused", "fresh"):
            ratios = []
            for key, r in table.items():
                best, mine = peer_best(r, peer), num(r["collie_us"])
                if key[3] == data and best and mine:
                    ratios.append(mine / best)
            if ratios:
                wins = sum(1 for x in ratios if x <= 1.0)
                print(f"| {NAMES[peer]} | {data} | {len(ratios)} | {wins} | "
                      f"{statistics.median(ratios):.2f} | {min(ratios):.2f}–{max(ratios):.2f} |")


def per_size(table, column="ratio"):
    print("| P | data | points | collie ≤ best peer | ≤ 1.3 × | above 1.3 × (ratio) |")
    print("| ---: | --- | ---: | ---: | ---: | --- |")
    for P in sorted({k[1] for k in table}):
        for data in ("reused", "fresh"):
            rows = sorted(((k, ratio_in(r, column)) for k, r in table.items()
                           if k[1] == P and k[3] == data and ratio_in(r, column)),
                          key=lambda kr: (kr[0][0], kr[0][2]))
            if not rows:
                continue
            over = ", ".join(f"{k[0]} {human(k[2])} {x:.2f}" for k, x in rows if x > 1.3)
            print(f"| {P} | {data} | {len(rows)} | {sum(1 for _, x in rows if x <= 1.0)} | "
                  f"{sum(1 for _, x in rows if x <= 1.3)} | {over or 'none'} |")


def totals(table):
    colls = sorted({k[0] for k in table})
    groups = [("", colls)] + ([(f"{c}, ", [c]) for c in colls] if len(colls) > 1 else [])
    kinds = (("collie (malloc)", "ratio"), ("collie_alloc", "ratio_collie_alloc"),
             ("shared heap", "ratio_shared_heap"))
    for prefix, which in groups:
        for data in ("reused", "fresh"):
            for label, col in kinds:
                ratios = [num(r.get(col)) for k, r in table.items()
                          if k[3] == data and k[0] in which and num(r.get(col))]
                if ratios:
                    print(f"- {prefix}{data} data, {label}: at or below the best peer at "
                          f"{sum(1 for x in ratios if x <= 1.0)} of {len(ratios)} points, "
                          f"within 1.3 × at {sum(1 for x in ratios if x <= 1.3)}, worst "
                          f"{max(ratios):.2f}, best {min(ratios):.2f}")


MAPPED_TARGET, MAPPED_FROM = 0.6, 512 << 10


def mapped_target(table):
    """collie_alloc and shared-heap ratios from 512 KiB against 0.6 x the best peer."""
    for label, col in (("collie_alloc", "ratio_collie_alloc"), ("shared heap", "ratio_shared_heap")):
        got = sorted((k, num(r.get(col))) for k, r in table.items()
                     if k[2] >= MAPPED_FROM and num(r.get(col)))
        if not got:
            continue
        miss = [f"{c} P={p} {human(b)} {d} {x:.2f}" for (c, p, b, d), x in got if x > MAPPED_TARGET]
        print(f"- {label} from {human(MAPPED_FROM)}: at most {MAPPED_TARGET} × the best peer at "
              f"{len(got) - len(miss)} of {len(got)} points" +
              (f"; above: {', '.join(miss)}" if miss else ""))


SHARE_TARGET, OVER_TARGET = 0.9, 1.3
POINT_TARGETS = (("allreduce", 2 << 20, 0.85), ("bcast", 2 << 20, 1.0), ("bcast", 8 << 20, 1.0))


def mapped_best(r):
    """The better of a point's collie_alloc and shared-heap ratios, or None."""
    got = [x for x in (num(r.get("ratio_collie_alloc")), num(r.get("ratio_shared_heap"))) if x]
    return min(got) if got else None


def point_targets(got):
    """The P = 2 points of issue 14 that the run has: (target, reused / fresh, met) rows."""
    rows = []
    for coll, size, limit in POINT_TARGETS:
        xs = {k[3]: x for k, x in got.items() if k[:3] == (coll, 2, size)}
        if xs:
            shown = " / ".join(f"{xs[d]:.2f}" if d in xs else "–" for d in ("reused", "fresh"))
            rows.append((f"P = 2 {coll} {human(size)} ≤ {limit} × (reused / fresh)", shown,
                         all(x <= limit for x in xs.values())))
    return rows


def target_rows(table, column):
    """Issue 14's targets in one view: (target, what the run gives, met) rows; both data
    kinds count, so "every point" means every (collective, P, size, data)."""
    got = {k: x for k, x in ((k, ratio_in(r, column)) for k, r in table.items()) if x}
    if not got:
        return []
    n, at_most = len(got), sum(1 for x in got.values() if x <= 1.0)
    over = ", ".join(f"{c} P={p} {human(b)} {d} {x:.2f}"
                     for (c, p, b, d), x in sorted(got.items()) if x > OVER_TARGET)
    rows = [(f"≤ 1.0 × the best peer at ≥ {SHARE_TARGET:.0%} of points",
             f"{at_most} of {n} ({at_most / n:.0%})", at_most >= SHARE_TARGET * n),
            (f"never above {OVER_TARGET} ×", over or "none", not over)]
    mapped = [x for x in (mapped_best(r) for k, r in table.items() if k[2] >= MAPPED_FROM) if x]
    if mapped:
        ok = sum(1 for x in mapped if x <= MAPPED_TARGET)
        rows.append((f"collie_alloc or shared heap ≤ {MAPPED_TARGET} × from {human(MAPPED_FROM)} "
                     "(first pass)", f"{ok} of {len(mapped)}", ok == len(mapped)))
    return rows + point_targets(got)


def targets(table, column="ratio"):
    """Issue 14's targets as a table (module docstring, item 8)."""
    rows = target_rows(table, column)
    if not rows:
        return
    print("| target | " + ("paired" if column == "rematch_ratio" else "first pass") + " | met? |")
    print("| --- | --- | --- |")
    for what, value, met in rows:
        print(f"| {what} | {value} | {'yes' if met else 'no'} |")


def states(table):
    """How the machine's states (bench/compare_state.py) entered the comparison."""
    splits = sorted({r["line_split_ns"] for r in table.values() if r.get("line_split_ns")})
    if not splits:
        print("- machine state: one state throughout (or not probed): every run compared")
        return
    count = {}
    for r in table.values():
        key = (r.get("best_peer_state") or "none", r.get("state_matched") or "")
        count[key] = count.get(key, 0) + 1
    parts = [f"{n} with the best peer in the {s} state{' (collie not in it)' if m == 'no' else ''}"
             for (s, m), n in sorted(count.items())]
    print(f"- machine states: two (cache line one-way split at {', '.join(splits)} ns); points: "
          + "; ".join(parts))


def main(argv):
    colls = None
    if len(argv) >= 2 and argv[0] == "--colls":
        colls, argv = argv[1].split(), argv[2:]
    paths = argv
    if not paths:
        sys.exit("usage: compare_report.py [--colls \"C ...\"] SUMMARY_CSV [SUMMARY_CSV ...]")
    table = load(paths, colls)
    matrix(table)
    point_table(table)
    print()
    peer_table(table)
    print()
    per_size(table)
    print()
    totals(table)
    mapped_target(table)
    states(table)
    print()
    targets(table)
    paired = sum(1 for r in table.values() if num(r.get("rematch_ratio")) is not None)
    if paired:
        print(f"\nPaired rematch ({paired} of {len(table)} points timed again side by side; the "
              "median over rounds of collie / the best peer):\n")
        matrix(table, "rematch_ratio")
        per_size(table, "rematch_ratio")
        print()
        targets(table, "rematch_ratio")


if __name__ == "__main__":
    main(sys.argv[1:])
