"""soak.py — a seeded random sequence of collectives through collie's Python API, checked
call by call against numpy references (the Python counterpart of tests/mp/mp_soak.c).

    collie-run -n P python soak.py [CALLS [SEED]]        (defaults: 200 calls, seed 1)

Every rank draws the same sequence from the seed.  Per call: the collective (allreduce,
reduce, bcast, barrier, allgather(v), reduce_scatter(_block), alltoall(v), gather(v),
scatter(v), scan, exscan; now and then a split of the world into new teams, used and
freed), the team (the world, a dup of it, or this rank's half of a split whose key
reverses the ranks), and per team the dtype (int8…uint64, float16/32/64, bfloat16 with
ml_dtypes), the op (sum, prod, min, max, land, lor, lxor, band, bor, bxor where defined, a
non-commutative Python callable and a commutative collie.Op), the size (0 to 1 MiB per
buffer), the shape (0-d, 1-d, 2-d in C or Fortran order where allowed), the root, counts
and displacements (packed or with gaps), in place or out= given or a new array, the buffer
kind (numpy, memoryview, array.array, a __dlpack__-only object, a numpy scalar) and the
call form: blocking, or split-phase (the i… form), started in sequence order and completed
at the end of its window of 4 calls in an order of each rank's own — by wait(), by a loop
of test(timeout_ms), or by dropping the request (its deallocation waits).  One call in 25
is a bad call that every rank makes alike (a strided view, Fortran order for a block
collective, bool/complex, a read-only out, a wrong out, partial overlap, an unknown op or
one undefined for the dtype, wrong counts): it must raise CollieError naming the problem,
and the next calls must work.

Inputs are numpy's generator on (seed, call, team, team rank), so each rank computes every
rank's input and the expected result by itself, in numpy, on the memory-order elements.
Values are chosen so that every reference is exact in any order of evaluation: integers
wrap (numpy's arithmetic on arrays wraps as C's unsigned arithmetic does); floats are small
integers (or quarters) for sum and prod, whose sums and products over 4 ranks fit the
significand; min/max take any floats.  So results are compared exactly, element by
element.  Buffers sit between guard elements, which must keep their values, and inputs
must not change (except where in place overwrites them).

Output: rank 0 prints "soak: P ranks, N calls, seed S: passed (0 failures)"; a rank that
finds a wrong result prints the call, what it was and the first wrong element.  Exit
status 1 on any failure.  SOAK_FROM=K replays from call K (rounded down to its window of
4: a call's draws depend only on the seed and its number); SOAK_VERBOSE=1 makes rank 0
print every call.

The code: soak_data.py (dtypes, ops, draws, guarded buffers), soak_call.py (what every call
shares: draws, buffers, expectations, completion, checks), soak_colls.py and soak_vcolls.py
(the collectives' calls), soak_bad.py (the bad calls); this file runs the sequence.
"""
import os
import sys

import numpy as np

import collie
import soak_data
from soak_bad import bad_call
from soak_call import CallBase
from soak_colls import BlockColls, ElementwiseColls
from soak_data import COLLS, WINDOW, Failure, rng
from soak_vcolls import VColls


class Call(ElementwiseColls, BlockColls, VColls, CallBase):
    """One collective call: drawn, started, checked."""


# -- the sequence -------------------------------------------------------------------------

def make_teams(world):
    """world, a dup of it, and this rank's half of a split by parity whose key reverses the
    ranks.  Team keys (for the inputs' generator): 0, 1, 2 + color."""
    dup = world.dup()
    color = world.rank % 2
    half = world.split(color, key=world.size - world.rank)
    members = [j for j in range(world.size) if j % 2 == color][::-1]
    if half.size != len(members) or half.rank != members.index(world.rank):
        raise Failure("split: rank %d of %d in the half; expected %d of %d" % (
            half.rank, half.size, members.index(world.rank), len(members)))
    return [(world, 0), (dup, 1), (half, 2 + color)]


def split_call(world, k):
    """A split of the world by drawn colors (some UNDEFINED) and keys: the team's rank and
    size are checked, one allreduce and one allgather run on it, then it is freed."""
    g = rng(k, 9)
    P = world.size
    colors = [int(c) if c < 3 else collie.UNDEFINED for c in g.integers(0, 4, size=P)]
    keys = [int(v) for v in g.integers(-2, 3, size=P)]
    me = world.rank
    t = world.split(colors[me], key=keys[me])
    if colors[me] == collie.UNDEFINED:
        if t is not None:
            raise Failure("split with UNDEFINED returned a team")
        return
    members = sorted((keys[j], j) for j in range(P) if colors[j] == colors[me])
    members = [j for _, j in members]
    if (t.size, t.rank) != (len(members), members.index(me)):
        raise Failure("split: rank %d of %d; expected %d of %d" % (
            t.rank, t.size, members.index(me), len(members)))
    with t:
        y = t.allreduce(np.array([me, 1], np.int64))
        want = [sum(members), len(members)]
        if y.tolist() != want:
            raise Failure("allreduce on the split team gave %s; expected %s" % (y, want))
        ga = t.allgather(np.int16(me))
        if ga.tolist() != members:
            raise Failure("allgather on the split team gave %s; expected %s" % (ga, members))
    try:
        t.barrier()
        raise Failure("a freed team's barrier did not raise")
    except collie.CollieError as e:
        if "freed" not in str(e):
            raise Failure("a freed team's call raised %r" % e)


def run_window(world, teams, w, first, last, verbose):
    """Calls [first, last) of window w.  Returns the number of failures on this rank."""
    pending = []
    failures = 0
    for k in range(first, last):
        g = rng(k, 0)
        kind = g.random()
        if kind < 0.04:                # made with the window's requests in flight
            what = bad_call(world, k)
            if verbose and RANK == 0:
                print("soak: call %d: bad call: %s" % (k, what), flush=True)
            continue
        if kind < 0.07:
            failures += finish(world, w, k, pending)   # a free needs no request in flight
            pending = []
            if verbose and RANK == 0:
                print("soak: call %d: split / free" % k, flush=True)
            split_call(world, k)
            continue
        team, tkey = teams[g.integers(len(teams))]
        coll = COLLS[g.integers(len(COLLS))]
        c = Call(k, coll, team, tkey, split_phase=g.random() < 0.4)
        try:
            c.start()
        except Exception:
            print("soak: rank %d: %s raised:" % (RANK, c.describe()), flush=True)
            raise
        if verbose and world.rank == 0:
            print("soak: " + c.describe(), flush=True)
        if c.split_phase:
            pending.append(c)
        else:
            failures += check(c)
    return failures + finish(world, w, last, pending)


def finish(world, w, k, pending):
    """Completes the split-phase calls in this rank's own order, then checks them."""
    mine = rng(w, 5, k, world.rank)
    for i in mine.permutation(len(pending)):
        c = pending[i]
        how = ["wait", "test", "drop"][int(mine.integers(3))]
        if how == "drop" and not hasattr(c, "expected_return"):
            how = "wait"
        c.complete(how)
    return sum(check(c) for c in pending)


def check(c):
    try:
        c.verify()
        return 0
    except Failure as e:
        print("soak: FAILED on world rank %d: %s: %s" % (RANK, c.describe(), e), flush=True)
        return 1


def main():
    global RANK
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    soak_data.SEED = seed   # rng()'s
    start = int(os.environ.get("SOAK_FROM", "0")) // WINDOW * WINDOW
    verbose = os.environ.get("SOAK_VERBOSE") == "1"
    world = collie.init()
    RANK = world.rank
    teams = make_teams(world)
    failures = 0
    for w in range(start // WINDOW, (calls + WINDOW - 1) // WINDOW):
        failures += run_window(world, teams, w, w * WINDOW, min(calls, (w + 1) * WINDOW),
                               verbose)
    total = int(world.allreduce(np.array([failures], np.int64))[0])
    for t, key in teams[1:]:
        t.free()
    if world.rank == 0:
        print("soak: %d ranks, %d calls, seed %d: %s (%d failures)" % (
            world.size, calls - start, seed, "passed" if total == 0 else "FAILED", total),
            flush=True)
    collie.finalize()
    return 1 if total else 0


RANK = 0

if __name__ == "__main__":
    sys.exit(main())