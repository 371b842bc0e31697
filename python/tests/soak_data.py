"""soak_data.py — the soak's data (python/tests/soak.py): dtypes, ops and their numpy
references, the seeded draws and input values, guarded buffers and the buffer kinds given
to collie.  The seed is set once by soak.py's main() (SEED below)."""
import array

import numpy as np

import collie
from conftest import DLPackOnly   # python/tests, beside this script

try:
    import ml_dtypes
    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BFLOAT16 = None

INTS = [np.dtype(n) for n in ("int8", "int16", "int32", "int64",
                              "uint8", "uint16", "uint32", "uint64")]
FLOATS = [np.dtype(n) for n in ("float16", "float32", "float64")] + \
         ([BFLOAT16] if BFLOAT16 is not None else [])
WINDOW = 4        # split-phase calls are completed at the end of their window of 4 calls
GUARD = 3         # guard elements on each side of a buffer
MAX_BYTES = 1 << 20

REDUCING = ["allreduce", "reduce", "scan", "exscan", "reduce_scatter_block",
            "reduce_scatter"]
COLLS = REDUCING + ["bcast", "barrier", "allgather", "allgatherv", "alltoall", "alltoallv",
                    "gather", "gatherv", "scatter", "scatterv"]
TEAM_NAMES = {0: "world", 1: "dup", 2: "even half", 3: "odd half"}   # by team key


def first_nonzero(a, b):
    """Non-commutative (and associative): a where a != 0, else b; over ranks in order the
    result is the first rank's non-zero element."""
    return np.where(a != 0, a, b)


CSUM = collie.Op(lambda a, b: a + b, commutative=True)


def _logical(f):
    return lambda a, b: f(a != 0, b != 0).astype(a.dtype)


REFS = {"sum": np.add, "csum": np.add, "prod": np.multiply, "max": np.maximum,
        "min": np.minimum, "band": np.bitwise_and, "bor": np.bitwise_or,
        "bxor": np.bitwise_xor, "land": _logical(np.logical_and),
        "lor": _logical(np.logical_or), "lxor": _logical(np.logical_xor),
        "first": first_nonzero, "fresh": first_nonzero}


def op_arg(name):
    """What the call is given for op `name`: a name, CSUM, first_nonzero, or (fresh) a
    new callable object each call."""
    if name == "csum":
        return CSUM
    if name == "first":
        return first_nonzero
    if name == "fresh":
        return lambda a, b: first_nonzero(a, b)
    return name


def fold(op, xs, dt):
    with np.errstate(all="ignore"):
        acc = xs[0]
        for x in xs[1:]:
            acc = np.asarray(REFS[op](acc, x)).astype(dt)
        return acc


class Failure(Exception):
    pass


# -- draws --------------------------------------------------------------------------------

SEED = 1   # the run's seed (soak.py's second argument)


def rng(*key):
    return np.random.default_rng([SEED] + [int(k) for k in key])


def ops_for(dt):
    base = ["sum", "prod", "max", "min", "first", "csum", "fresh"]
    return base + (["band", "bor", "bxor", "land", "lor", "lxor"] if dt.kind in "iu" else [])


def values(g, n, dt, op):
    """n input elements of dtype dt for op (exact under any evaluation order)."""
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = g.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        v[g.random(n) < 0.25] = 0
        return v
    if op in ("max", "min"):
        return g.standard_normal(n).astype(dt)
    small = dt.itemsize == 2 or dt == BFLOAT16
    if op == "prod":
        v = g.integers(-3, 4, size=n)
    elif op in ("first", "fresh"):
        v = g.integers(-4, 5, size=n) * (g.random(n) < 0.7)
    else:   # sums of 4: |v| < 16 (bfloat16: 8 bits), 64 (float16), quarters beyond
        lim = 8 if dt == BFLOAT16 else 64 if small else 1 << 16
        v = g.integers(-lim, lim + 1, size=n) * (1.0 if small else 0.25)
    return v.astype(dt)


class Buf:
    """A numpy array (C or Fortran order, any shape) inside guard elements."""

    def __init__(self, flat, shape, order="C", fill=None):
        dt = flat.dtype
        n = flat.size
        self.guard = np.arange(1, 2 * GUARD + 1).astype(dt)
        self.base = np.empty(n + 2 * GUARD, dtype=dt)
        self.base[:GUARD] = self.guard[:GUARD]
        self.base[GUARD + n:] = self.guard[GUARD:]
        self.flat = self.base[GUARD:GUARD + n]
        self.flat[...] = flat if fill is None else fill
        self.arr = (self.flat.reshape(shape) if order == "C"
                    else self.flat.reshape(shape[::-1]).T)

    def guards_ok(self):
        n = self.flat.size
        return (np.array_equal(self.base[:GUARD], self.guard[:GUARD]) and
                np.array_equal(self.base[GUARD + n:], self.guard[GUARD:]))


ARRAY_CODES = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
               "uint32": "I", "int64": "q", "uint64": "Q", "float32": "f", "float64": "d"}


def as_kind(kind, arr):
    """arr as the buffer kind given to collie (None: arr is used itself; array.array copies,
    so an array.array x is checked as the call's input only)."""
    if kind == "memoryview":
        return memoryview(arr)
    if kind == "dlpack":
        return DLPackOnly(arr)
    if kind == "array":
        return array.array(ARRAY_CODES[arr.dtype.name], arr.reshape(-1).tobytes())
    if kind == "scalar":
        return arr.reshape(()).copy()[()]
    return arr

