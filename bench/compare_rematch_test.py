"""compare_rematch_test.py — ctest bench.compare_rematch: bench/compare's paired rematch
(compare_rematch.py, compare_summary.py) on made-up compare.csv rows, each expected value
worked out by hand:
  - the first pass's numbers leave the rematch rows (negative repetitions) out: a faster
    rematch run changes neither collie's time nor the best peer's;
  - the paired ratio is the median over rounds of collie / the best peer configuration in
    the same round (rounds 10/8, 12/12, 9/10: ratios 1.25, 1.0, 0.9, median 1.0), a round
    in which one side failed is dropped, another configuration of the same peer (timed in
    the rematch for another point) is not the best peer, and the medians of the two
    sides' times are reported;
  - a point without rematch rows has empty paired columns;
  - run(): only points above the threshold; per collective, P and data mode, collie's
    auto and each configuration that is some point's best peer, over the given sizes,
    N rounds, the order reversed every round (a stand-in runner).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_rematch  # noqa: E402
import compare_summary  # noqa: E402


def row(lib, config, rep, us, size=2048, data="reused", status="ok"):
    return ["bcast", 2, size, data, lib, config, rep, status, us, 100, "x", 40.0, 40.0]


def check(what, got, want):
    if got != want:
        sys.exit(f"compare_rematch_test: {what}: got {got!r}, want {want!r}")


def check_summary():
    rows = [row("collie", "auto", 1, 11.0), row("collie", "auto", 2, 13.0),
            row("intelmpi", "auto", 1, 9.0), row("intelmpi", "binomial", 1, 8.5),
            row("collie", "auto", 1, 5.0, size=8), row("intelmpi", "auto", 1, 4.0, size=8)]
    rows += [row("collie", "auto", -1, 10.0), row("intelmpi", "binomial", -1, 8.0),
             row("intelmpi", "binomial", -2, 12.0), row("collie", "auto", -2, 12.0),
             row("collie", "auto", -3, 9.0), row("intelmpi", "binomial", -3, 10.0),
             row("collie", "auto", -4, 1.0), row("intelmpi", "binomial", -4, 0.0, status="failed"),
             row("collie", "collie_alloc", -1, 0.5), row("intelmpi", "auto", -1, 1.0),
             row("intelmpi", "auto", -2, 1.0), row("intelmpi", "auto", -3, 1.0)]
    table = {r["bytes"]: r for r in compare_summary.summarize(rows)}
    rec = table[2048]
    check("first pass collie", rec["collie_us"], 11.0)
    check("first pass best peer", (rec["best_peer"], rec["best_peer_config"], rec["best_peer_us"]),
          ("intelmpi", "binomial", 8.5))
    check("first pass ratio", rec["ratio"], 1.294)
    check("rounds", rec["rematch_rounds"], 3)
    check("collie median", rec["rematch_collie_us"], 10.0)
    check("peer median", rec["rematch_peer_us"], 10.0)
    check("paired ratio", rec["rematch_ratio"], 1.0)
    check("no rematch", [table[8][c] for c in compare_rematch.PAIRED_COLUMNS], ["", "", "", ""])


class Lib:
    def __init__(self, name, configs):
        self.name, self.names = name, configs

    def configs(self, coll, forced):
        return [(n, [], {}) for n in self.names]


class Runner:
    def __init__(self, libs):
        self.libs, self.calls = libs, []

    def run_config(self, point, rep, lib, config, counter, sizes):
        self.calls.append((point, rep, lib.name, config[0], sizes))


def check_run():
    def rec(size, peer, config, ratio, data="fresh"):
        return {"coll": "bcast", "P": 2, "bytes": size, "data": data, "best_peer": peer,
                "best_peer_config": config, "ratio": ratio}
    table = [rec(8, "mpich5", "posix_release_gather", 1.4), rec(64, "mpich5", "auto", 0.8),
             rec(128, "", "", ""), rec(512, "intelmpi", "binomial", 1.1),
             rec(2048, "mpich5", "posix_release_gather", 1.0), rec(8, "mpich5", "auto", 0.95, "reused")]
    runner = Runner([Lib("collie", ["auto", "collie_alloc"]),
                     Lib("mpich5", ["auto", "posix_release_gather"]),
                     Lib("intelmpi", ["auto", "binomial"])])
    sizes = [8, 64, 128, 512, 2048]
    compare_rematch.run(runner, table, 2, 0.9, sizes, lambda text: None, [0])
    fresh, reused = ("bcast", 2, "fresh"), ("bcast", 2, "reused")
    check("rematch launches", runner.calls,
          [(fresh, -1, "collie", "auto", sizes), (fresh, -1, "intelmpi", "binomial", sizes),
           (fresh, -1, "mpich5", "posix_release_gather", sizes),
           (fresh, -2, "mpich5", "posix_release_gather", sizes),
           (fresh, -2, "intelmpi", "binomial", sizes), (fresh, -2, "collie", "auto", sizes),
           (reused, -1, "collie", "auto", sizes), (reused, -1, "mpich5", "auto", sizes),
           (reused, -2, "mpich5", "auto", sizes), (reused, -2, "collie", "auto", sizes)])


def main():
    check_summary()
    check_run()
    print("compare_rematch_test: ok")


if __name__ == "__main__":
    main()
