"""compare_rematch.py — bench/compare's paired rematch (--rematch N): collie and each
point's best peer configuration timed again side by side, and the paired ratio per point.

Why.  The first pass gives every point's best peer as the fastest of many runs (every
peer's auto and forced configs, each repeated), launched minutes apart from collie's.  On
a machine whose speed drifts under the benchmark that is two biases at once: the oracle
takes the luckiest of a dozen or more samples against collie's best of two or three, and
the runs it compares were taken minutes apart.  On the 2-vCPU VM of 2026-12-02 the memory
bandwidth of `floors bandwidth` moved between 52 and 75 GB/s (1 MiB copies) from one
minute to the next with the cache-line probe unchanged, and Intel MPI's bcast of 2 MiB
took 86, 106, 169 and 184 µs in four launches a few minutes apart: a first pass ratio
then says more about when each library ran than about the libraries.

What.  After the first pass (and its top-ups) each point whose ratio is above
--rematch-above (default 0: every point) is timed N more rounds (a point below it gets
a paired ratio too where its best peer configuration ran for another point: the launches
cover every size).  Per collective, team
size and data mode, a round launches collie's `auto` and every peer configuration that is
some point's best, one right after the other, the order reversed from round to round.
Each launch covers the first pass's sizes, as the first pass's launches did: a library's
time at a size can depend on what ran before it in the launch (Intel MPI's allreduce of
8 KiB took 1.4 µs after the smaller sizes and 12–16 µs in a launch of that size alone).
compare.csv records these launches with negative repetitions (-1 … -N), which the first
pass's statistics leave out.  summary.csv then adds, per point, the rounds that
completed, the medians of collie's and the best peer's times over them, and the paired
ratio: the median over rounds of collie's time / the best peer configuration's time in
the same round.  The first pass's ratio is kept as it was; compare_report.py prints both.
"""

import statistics

PAIRED_COLUMNS = ["rematch_rounds", "rematch_collie_us", "rematch_peer_us", "rematch_ratio"]


def is_rematch(rep):
    """A compare.csv repetition of the paired rematch (negative)."""
    return int(rep) < 0


def candidates(table, above):
    """The summary records to time again: a best peer, a ratio, and the ratio above
    `above` (groups() orders them)."""
    return [r for r in table if r["best_peer"] and r["ratio"] != "" and r["ratio"] > above]


def config_named(lib, coll, name):
    """lib's configuration called `name` for coll (auto or a forced one), or None."""
    return next((c for c in lib.configs(coll, True) if c[0] == name), None)


def groups(todo):
    """{(coll, P, data): sorted [(peer, config)]}: the best peer configurations of the
    points to time again, per collective, team size and data mode."""
    out = {}
    for rec in todo:
        out.setdefault((rec["coll"], rec["P"], rec["data"]), set()).add(
            (rec["best_peer"], rec["best_peer_config"]))
    return {k: sorted(v) for k, v in sorted(out.items())}


def run(runner, table, rounds, above, sizes, say, counter):
    """Times the candidate points `rounds` more rounds: per (collective, P, data), collie's
    auto and the points' best peer configurations in turn, each over `sizes`."""
    libs = {lib.name: lib for lib in runner.libs}
    collie = libs.get("collie")
    todo = candidates(table, above) if collie and rounds > 0 else []
    if todo:
        say(f"compare: paired rematch: {len(todo)} points, {rounds} rounds each")
    for (coll, nprocs, data), peers in groups(todo).items():
        turn = [(collie, config_named(collie, coll, "auto"))]
        turn += [(libs[p], config_named(libs[p], coll, c)) for p, c in peers if p in libs]
        turn = [(lib, config) for lib, config in turn if config]
        for k in range(1, rounds + 1):
            for lib, config in turn if k % 2 else turn[::-1]:
                runner.run_config((coll, nprocs, data), -k, lib, config, counter, sizes)


def paired(rows, table):
    """{(coll, P, bytes, data): [(collie us, best peer us), ...]} from the rematch rows of
    compare.csv: per round, collie's auto and the point's best peer configuration (only
    rounds where both completed)."""
    best = {(r["coll"], r["P"], r["bytes"], r["data"]): (r["best_peer"], r["best_peer_config"])
            for r in table}
    runs = {}
    for row in rows:
        coll, nprocs, size, data, lib, config, rep, status, us = row[:9]
        point = (coll, nprocs, size, data)
        if not is_rematch(rep) or status != "ok" or point not in best:
            continue
        side = "collie" if (lib, config) == ("collie", "auto") else \
            "peer" if (lib, config) == best[point] else None
        if side:
            runs.setdefault(point, {}).setdefault(int(rep), {})[side] = us
    return {point: [(r["collie"], r["peer"]) for _, r in sorted(by_round.items())
                    if "collie" in r and "peer" in r]
            for point, by_round in runs.items()}


def digits4(x):
    return float(f"{x:.4g}")


def add_columns(table, rows):
    """Fills PAIRED_COLUMNS of every summary record ("" where the point had no rematch)."""
    pairs = paired(rows, table)
    for rec in table:
        got = pairs.get((rec["coll"], rec["P"], rec["bytes"], rec["data"]), [])
        got = [(c, p) for c, p in got if p > 0]
        rec["rematch_rounds"] = len(got) if got else ""
        rec["rematch_collie_us"] = digits4(statistics.median(c for c, _ in got)) if got else ""
        rec["rematch_peer_us"] = digits4(statistics.median(p for _, p in got)) if got else ""
        rec["rematch_ratio"] = digits4(statistics.median(c / p for c, p in got)) if got else ""
    return table
