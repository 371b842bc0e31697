"""compare_state.py — the machine's state for bench/compare, so that collie is compared
with each peer under the same conditions.

Some machines change under a benchmark: on the 2-vCPU KVM guest of docs/performance.md
the host moves the two vCPUs, within minutes, between cores that share a cache (a cache
line takes ~55 ns from one to the other) and cores that do not (~210–260 ns), and every
shared-memory library's times change with it (bcast 32 KiB: collie 0.9 against 2.5 µs,
Intel MPI 1.2 against 2.8).  A comparison whose libraries ran in different states
compares the machine, not the libraries.

So bench/compare probes the one-way latency of a cache line between CPUs 0 and 1
(`floors line`, ~10 ms) before and after every launch, and records both in compare.csv.
When the probes of a run fall in two clusters (the highest at least 1.6× the lowest),
each launch gets a state: "fast" or "slow" (both probes on the same side of the split,
the geometric mean of the lowest and the highest probe), or "mixed" (the state changed
during the launch).  Each point's best peer is the fastest run of any peer in any state
(the oracle, as before), and collie's time at that point is its best run in the state the
best peer's run had.  Where collie has no such run, bench/compare waits (probing every
2 s, up to --state-wait seconds) for that state and runs collie's configuration again
("top-up" runs, rep 0 in compare.csv).  Points still without a run in the best peer's
state use collie's best in any state and say so (summary.csv: state_matched "no").
"""
import math
import os
import subprocess
import time

FAST, SLOW, MIXED = "fast", "slow", "mixed"


class Probe:
    """`floors line` of collie's build: the one-way cache-line latency in ns (median of
    its batches), or "" where it cannot run (one CPU, no build)."""

    def __init__(self, build_dir):
        self.path = os.path.join(build_dir, "bench", "floors")
        self.ok = os.access(self.path, os.X_OK)

    def measure(self):
        if not self.ok:
            return ""
        try:
            res = subprocess.run([self.path, "line"], capture_output=True, text=True, timeout=10)
            fields = res.stdout.split()
            return float(fields[2]) if res.returncode == 0 and len(fields) == 3 else ""
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return ""


def split_of(probes):
    """The latency between the two states, or None when all probes lie within 1.6× of
    each other (one state: nothing to match)."""
    values = [float(v) for v in probes if v != ""]
    if not values or max(values) < 1.6 * min(values):
        return None
    return math.sqrt(min(values) * max(values))


def state_at(probe, split):
    """The state one probe says: fast or slow."""
    return FAST if float(probe) < split else SLOW


def state_of(before, after, split):
    """A launch's state from its two probes: fast, slow, mixed, or "" (no split, or a
    probe missing)."""
    if split is None or before == "" or after == "":
        return ""
    a, b = state_at(before, split), state_at(after, split)
    return MIXED if a != b else a


def without_mixed(per_state):
    """{state: time} without the launches during which the state changed, unless those
    are all there is."""
    return {s: v for s, v in per_state.items() if s != MIXED} or per_state


def wait_for(probe, want, split, limit_s, say):
    """Probes every 2 s until the machine is in state `want` (True) or limit_s passed."""
    t0 = time.time()
    while True:
        v = probe.measure()
        if v != "" and state_at(v, split) == want:
            return True
        if time.time() - t0 >= limit_s:
            say(f"compare: the machine did not come to the {want} state within {limit_s:.0f} s "
                f"(last probe {v} ns, split {split:.0f} ns)")
            return False
        time.sleep(2)


def matched_best(by_state, want):
    """collie's best (us, algorithm) in state `want` from {state: (us, algorithm)}, and
    whether it matched ("yes"/"no"; "" when there is no state to match): its best in any
    state when it has no run in `want`."""
    if want in (FAST, SLOW) and want in by_state:
        return by_state[want], "yes"
    return min(by_state.values(), default=None), "no" if want in (FAST, SLOW) else ""
