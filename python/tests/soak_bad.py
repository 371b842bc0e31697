"""soak_bad.py — the soak's bad calls (python/tests/soak.py): calls every rank makes alike
that must raise CollieError with a message naming the problem."""
import re

import numpy as np

import collie
from soak_data import Failure, rng


def bad_calls(team):
    """(what, callable, regex of the message) — made alike on every rank."""
    P = team.size
    x = np.arange(4 * P, dtype=np.int32)
    f = np.asfortranarray(np.arange(6 * P, dtype=np.int64).reshape(2 * P, 3))
    ro = np.zeros(4 * P, np.int32)
    ro.flags.writeable = False
    z = np.zeros(8 * P)
    return [
        ("strided x", lambda: team.allreduce(x[::2]), "not contiguous"),
        ("transposed x for alltoall", lambda: team.alltoall(f), "Fortran order"),
        ("Fortran out for allgather",
         lambda: team.allgather(np.zeros(3), out=np.zeros((3, 2), order="F")), "Fortran"),
        ("strided out", lambda: team.scan(x[:2 * P], out=np.zeros(4 * P, np.int32)[::2]),
         "not contiguous"),
        ("bool x", lambda: team.allgather(np.zeros(3, bool)), "element type '\\?'"),
        ("complex x", lambda: team.bcast(np.zeros(3, complex)), "element type"),
        ("big-endian x", lambda: team.allreduce(np.zeros(3, ">i4")), "element type"),
        ("read-only out", lambda: team.allreduce(x, out=ro), "read-only|writable"),
        ("out of another dtype", lambda: team.allreduce(x, out=np.zeros(4 * P)),
         "element type and count"),
        ("out too small", lambda: team.allgather(x, out=np.zeros(P, np.int32)),
         "out is"),
        ("partial overlap", lambda: team.scan(z[:4], out=z[2:6]), "overlap"),
        ("unknown op", lambda: team.allreduce(x, op="avg"), "unknown op 'avg'"),
        ("bxor on floats", lambda: team.allreduce(z, op="bxor"), "bxor|not defined"),
        ("counts of the wrong length",
         lambda: team.allgatherv(x[:1], [1] * (P + 1)), "entries for a team"),
        ("negative count", lambda: team.reduce_scatter(x[:P], [-1] + [1] * (P - 1)), "negative"),
        ("x not P blocks", lambda: team.alltoall(np.zeros(P * 2 + 1)) if P > 1
         else team.allreduce(x, op="nope"), "not a multiple|unknown op"),
        ("root out of range", lambda: team.bcast(x, root=P), "root"),
        ("not a buffer", lambda: team.allreduce("text"), "not a buffer"),
    ]


def bad_call(team, k):
    """One bad call drawn for call k: it must raise CollieError naming the problem."""
    calls = bad_calls(team)
    what, fn, pattern = calls[rng(k, 8).integers(len(calls))]
    try:
        fn()
    except collie.CollieError as e:
        if not re.search(pattern, str(e)):
            raise Failure("bad call (%s) raised %r, expected a message matching %r"
                          % (what, str(e), pattern))
        return what
    raise Failure("bad call (%s) did not raise CollieError" % what)
