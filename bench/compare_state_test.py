"""compare_state_test.py — ctest bench.compare_state: bench/compare's matching of the
machine's state (compare_state.py, compare_summary.py) on made-up compare.csv rows, each
expected value worked out by hand:
  - one state (probes within 1.6x): no split, collie's best of any run, nothing matched;
  - two states: the best peer is the fastest peer run in any state, and collie's time is
    its best run in that run's state (not its faster run in the other state), matched;
  - collie without a run in that state: its best of any state, state_matched "no";
  - a launch whose probes straddle the split ("mixed") counts in no state, and for the
    best peer only where that configuration has no other run;
  - the top-up of bench/compare's Runner: after waiting for the slow state, it runs
    each collie configuration again at exactly the sizes where the best peer ran in a
    state that configuration did not, fast ones first (the launch and the probe are
    stand-ins here).
"""
import importlib.machinery
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_state  # noqa: E402
import compare_summary  # noqa: E402


def row(lib, config, us, before, after, size=32768, data="reused"):
    return ["bcast", 2, size, data, lib, config, 1, "ok", us, 100, "x", before, after]


def check(what, got, want):
    if got != want:
        sys.exit(f"compare_state_test: {what}: got {got!r}, want {want!r}")


def one_point(rows):
    table = compare_summary.summarize(rows)
    check("points", len(table), 1)
    return table[0]


def main():
    check("split, one state", compare_state.split_of([55.0, 60.0, 80.0, ""]), None)
    check("split, two states", round(compare_state.split_of([50.0, 200.0]), 6), 100.0)
    check("state fast", compare_state.state_of(50.0, 60.0, 100.0), "fast")
    check("state slow", compare_state.state_of(220.0, 260.0, 100.0), "slow")
    check("state mixed", compare_state.state_of(50.0, 220.0, 100.0), "mixed")
    check("state without probe", compare_state.state_of("", 220.0, 100.0), "")

    # One state: collie 2.0 (its best) against Intel MPI's 2.5.
    r = one_point([row("collie", "auto", 2.0, 55, 56), row("collie", "auto", 2.2, 60, 58),
                   row("intelmpi", "auto", 2.5, 57, 59)])
    check("one state: collie", r["collie_us"], 2.0)
    check("one state: ratio", r["ratio"], 0.8)
    check("one state: matched", (r["state_matched"], r["line_split_ns"]), ("", ""))

    # Two states: the best peer (Intel MPI forced, 1.0 in the fast state) against collie's
    # fast run (1.5), not its slow run (1.2, a different machine).
    rows = [row("collie", "auto", 1.5, 55, 56), row("collie", "auto", 1.2, 250, 240),
            row("intelmpi", "auto", 3.0, 250, 260), row("intelmpi", "shumilin", 1.0, 57, 58),
            row("openmpi", "auto", 0.5, 50, 240), row("openmpi", "auto", 2.0, 55, 56)]
    # openmpi's mixed run (0.5) is left out of the oracle: it has a clean one
    r = one_point(rows)
    check("two states: best peer", (r["best_peer"], r["best_peer_config"], r["best_peer_us"]),
          ("intelmpi", "shumilin", 1.0))
    check("two states: collie", (r["collie_us"], r["ratio"], r["best_peer_state"],
                                 r["state_matched"]), (1.5, 1.5, "fast", "yes"))
    check("two states: split", r["line_split_ns"], "114")   # sqrt(50 x 260)

    # A peer whose only run is mixed still counts (a loaded machine's probes straddle).
    r = one_point([row("collie", "auto", 1.5, 55, 56), row("intelmpi", "auto", 3.0, 50, 240)])
    check("only mixed", (r["best_peer"], r["best_peer_us"], r["best_peer_state"],
                         r["state_matched"]), ("intelmpi", 3.0, "mixed", ""))

    # No collie run in the best peer's (slow) state: its fast one, not matched.
    r = one_point([row("collie", "auto", 1.5, 55, 56), row("intelmpi", "auto", 3.0, 250, 260),
                   row("mpich", "auto", 4.0, 56, 57)])
    check("unmatched", (r["collie_us"], r["best_peer"], r["best_peer_state"],
                        r["state_matched"]), (1.5, "intelmpi", "slow", "no"))
    check_top_up()
    print("compare_state_test: passed")


class FakeProbe:
    def __init__(self, values):
        self.values = values

    def measure(self):
        return self.values.pop(0) if self.values else 250.0


class FakeCollie:
    name = "collie"

    def configs(self, coll, forced):
        return [("auto", [], {}), ("collie_alloc", [], {})]


def check_top_up():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare")
    loader = importlib.machinery.SourceFileLoader("compare_script", path)
    spec = importlib.util.spec_from_loader("compare_script", loader)
    compare = importlib.util.module_from_spec(spec)
    loader.exec_module(compare)
    runner = compare.Runner.__new__(compare.Runner)
    runner.a = type("A", (), {"state_wait": 30.0})()
    runner.libs = [FakeCollie()]
    runner.probe = FakeProbe([60.0, 250.0])   # fast, then slow: the wait ends at once
    runner.rows = [row("collie", "auto", 1.5, 55, 56, size=8), row("collie", "auto", 1.5, 55, 56),
                   row("intelmpi", "auto", 1.0, 250, 260, size=8),     # slow: needs a top-up
                   row("intelmpi", "auto", 3.0, 55, 58),               # fast: collie has one
                   row("collie", "collie_alloc", 0.5, 250, 240, size=8),   # already slow
                   row("collie", "collie_alloc", 0.5, 250, 240)]   # 32 KiB: needs fast
    launched = []
    runner.run_config = lambda point, rep, lib, config, counter, sizes=None: \
        launched.append((point, rep, config[0], sizes))
    compare.say = lambda text: None
    runner.top_up([0])
    check("top-up launches", launched, [(("bcast", 2, "reused"), 0, "collie_alloc", [32768]),
                                        (("bcast", 2, "reused"), 0, "auto", [8])])


if __name__ == "__main__":
    main()
