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
"""
import array
import os
import sys

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
BLOCKED = {"reduce_scatter_block", "alltoall", "scatter"}   # x holds P blocks


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


def flat_of(obj, dt):
    """The memory-order elements of a result (numpy array, memoryview, array.array)."""
    if isinstance(obj, np.ndarray):
        return obj.ravel(order="K")
    return np.frombuffer(obj, dtype=dt)


# -- one call -----------------------------------------------------------------------------

class Call:
    """One collective call: drawn, started, checked."""

    def __init__(self, k, coll, team, tkey, split_phase):
        self.k, self.coll, self.team, self.tkey = k, coll, team, tkey
        self.split_phase = split_phase
        self.P, self.r = team.size, team.rank
        g = rng(k, 1, tkey)          # the same on every rank of this team
        self.g = g
        self.mine = rng(k, 2, tkey, self.r)   # this rank's own choices
        dts = INTS + FLOATS
        self.dt = dts[g.integers(len(dts))]
        self.op = None
        if coll in REDUCING:
            ops = ops_for(self.dt)
            self.op = ops[g.integers(len(ops))]
        self.root = int(g.integers(self.P))
        self.checks = []           # (what, got flat, expected flat)
        self.unchanged = []        # Bufs that must keep their contents
        self.desc_extra = ""

    # inputs ------------------------------------------------------------------------------

    def count(self, per):
        """An element count for `per` equal parts of a buffer of up to 1 MiB."""
        g = self.g
        c = g.random()
        if c < 0.06:
            return 0
        maxn = max(1, MAX_BYTES // self.dt.itemsize // per)
        if c < 0.5:
            return int(g.integers(1, min(17, maxn) + 1))
        return int(np.exp(g.uniform(0, np.log(maxn))))

    def input(self, j, n):
        return values(rng(self.k, 3, self.tkey, j), n, self.dt, self.op)

    def inputs(self, n):
        return [self.input(j, n) for j in range(self.P)]

    def shape(self, n, allow0d=True):
        """A shape of n elements: 0-d, 1-d or 2-d."""
        c = self.g.random()
        if n == 1 and allow0d and c < 0.3:
            return ()
        if c < 0.5 or n == 0:
            return (n,)
        divs = [d for d in range(2, 65) if n % d == 0]
        if not divs:
            return (n,)
        d = divs[self.g.integers(len(divs))]
        return (d, n // d)

    def describe(self):
        return "call %d: %s%s team %s (rank %d of %d) %s%s %s root %d%s" % (
            self.k, "i" if self.split_phase else "", self.coll, TEAM_NAMES[self.tkey],
            self.r, self.P, self.dt, "" if self.op is None else " op " + self.op,
            "", self.root, self.desc_extra)

    # the calls ---------------------------------------------------------------------------

    def start(self):
        """Runs the blocking form (self.result) or starts the split-phase one (self.req)."""
        fn = getattr(self, "_" + self.coll)
        args, kwargs = fn()
        method = getattr(self.team, ("i" if self.split_phase else "") + self.coll)
        if self.split_phase:
            self.req = method(*args, **kwargs)
        else:
            self.result = method(*args, **kwargs)

    def kinds(self, shape, order, can_wrap=True):
        """The buffer kind of x: mostly numpy."""
        c = self.mine.random()
        if not can_wrap or c < 0.7 or self.dt == BFLOAT16:
            return "numpy"
        if c < 0.8:
            return "memoryview"
        if c < 0.9 and order == "C" and self.dt != BFLOAT16:
            return "dlpack"
        if self.dt.name in ARRAY_CODES and order == "C" and len(shape) == 1:
            return "array"
        return "numpy"

    def x_buf(self, flat, shape, order="C"):
        b = Buf(flat, shape, order)
        self.unchanged.append((b, flat))
        kind = self.kinds(shape, order)
        if shape == () and self.mine.random() < 0.3:
            kind = "scalar"
        self.desc_extra += " x %s %s%s" % (kind, shape, "F" if order == "F" else "")
        return b, as_kind(kind, b.arr)

    def out_buf(self, n, shape, order="C"):
        """An out array (garbage inside its guards), or None for a new one."""
        if self.mine.random() < 0.4:
            self.desc_extra += " out new"
            return None, None
        b = Buf(np.zeros(n, self.dt), shape, order,
                fill=(np.arange(n) % 97 + 7).astype(self.dt))
        kind = "memoryview" if self.mine.random() < 0.2 and self.dt != BFLOAT16 else "numpy"
        self.desc_extra += " out %s %s" % (kind, shape)
        return b, as_kind(kind, b.arr)

    def expect(self, what, got_fn, want):
        self.checks.append((what, got_fn, want))

    def expect_result(self, out_b, out_obj, want, shape, order="C"):
        """The call's result: out itself (its memory) when given, else a new array of
        shape `shape`."""
        if out_obj is not None:
            self.expected_return = out_obj
        def got():
            res = self.result
            if out_obj is not None:
                if res is not out_obj:
                    raise Failure("the result is not the out given")
                if not out_b.guards_ok():
                    raise Failure("out's guard elements changed")
                return out_b.flat
            if not isinstance(res, np.ndarray):
                raise Failure("the result is a %s, not a numpy array" % type(res).__name__)
            if res.shape != tuple(shape) or res.dtype != self.dt:
                raise Failure("the result has shape %s dtype %s; expected %s %s" % (
                    res.shape, res.dtype, tuple(shape), self.dt))
            if order == "F" and len(shape) > 1 and not res.flags.f_contiguous:
                raise Failure("the result is not in Fortran order like x")
            return res.ravel(order="K")
        self.expect("result", got, want)

    def expect_none(self):
        self.expected_return = None
        def got():
            if self.result is not None:
                raise Failure("the result is %r, not None" % type(self.result).__name__)
            return None
        self.expect("None", got, None)

    # allreduce, reduce, scan, exscan, bcast ----------------------------------------------

    def _elementwise(self):
        """x (any shape, C or Fortran order) and the expected result per coll."""
        n = self.count(1)
        shape = self.shape(n)
        order = "F" if len(shape) == 2 and self.g.random() < 0.3 else "C"
        xs = self.inputs(n)
        return n, shape, order, xs

    def _reduction(self, want, has_result, root_kw=False):
        n, shape, order, xs = self._elementwise()
        want = want(xs)
        mode = self.mine.random()
        kwargs = {"op": op_arg(self.op)}
        if root_kw:
            kwargs["root"] = self.root
        if has_result and mode < 0.25:   # in place: out = x
            b = Buf(xs[self.r], shape, order)
            self.desc_extra += " in place %s%s" % (shape, order)
            kwargs["out"] = b.arr
            self.expect_result(b, b.arr, want, shape)
            return (b.arr,), kwargs
        xb, x = self.x_buf(xs[self.r], shape, order)
        ob, out = self.out_buf(n, shape, order) if has_result else (None, None)
        if out is not None:
            kwargs["out"] = out
        if not has_result:
            if self.coll == "exscan" and out is None and self.mine.random() < 0.5:
                ob, out = self.out_buf_always(n, shape, order)   # left untouched at rank 0
                kwargs["out"] = out
                self.expect("untouched out", lambda: ob.flat, ob.flat.copy())
            self.expect_none()
        else:
            self.expect_result(ob, out, want, shape, order)
        return (x,), kwargs

    def out_buf_always(self, n, shape, order):
        b = Buf(np.zeros(n, self.dt), shape, order, fill=np.array(5).astype(self.dt))
        return b, b.arr

    def _allreduce(self):
        return self._reduction(lambda xs: fold(self.op, xs, self.dt), True)

    def _reduce(self):
        return self._reduction(lambda xs: fold(self.op, xs, self.dt), self.r == self.root,
                               root_kw=True)

    def _scan(self):
        return self._reduction(lambda xs: fold(self.op, xs[:self.r + 1], self.dt), True)

    def _exscan(self):
        return self._reduction(lambda xs: fold(self.op, xs[:self.r], self.dt) if self.r
                               else None, self.r > 0)

    def _bcast(self):
        n, shape, order, xs = self._elementwise()
        mine = xs[self.root] if self.r == self.root else xs[self.r]
        b = Buf(mine, shape, order)
        kind = "memoryview" if self.mine.random() < 0.2 and self.dt != BFLOAT16 else "numpy"
        self.desc_extra += " x %s %s%s" % (kind, shape, order)
        x = as_kind(kind, b.arr)
        self.expect_result(b, x, xs[self.root], shape)
        return (x,), {"root": self.root}

    def _barrier(self):
        self.expect_none()
        return (), {}

    # block collectives -------------------------------------------------------------------

    def _gathered(self, at_root):
        """allgather, gather: x of any shape, out (P, *shape) or flat, or x = out[rank]."""
        n = self.count(self.P)
        shape = self.shape(n)
        xs = self.inputs(n)
        want = np.concatenate(xs) if n else np.zeros(0, self.dt)
        P, r = self.P, self.r
        full = (P,) + shape
        kwargs = {} if self.coll == "allgather" else {"root": self.root}
        if at_root and self.mine.random() < 0.25:   # in place: x = out[rank]
            ob = Buf(np.zeros(P * n, self.dt), full if self.g.random() < 0.5 else (P * n,),
                     fill=np.array(3).astype(self.dt))
            ob.flat[r * n:(r + 1) * n] = xs[r]
            xview = ob.flat[r * n:(r + 1) * n].reshape(shape)
            self.desc_extra += " in place"
            kwargs["out"] = ob.arr
            self.expect_result(ob, ob.arr, want, full)
            return (xview,), kwargs
        xb, x = self.x_buf(xs[r], shape)
        if not at_root:
            self.expect_none()
            return (x,), kwargs
        ob, out = self.out_buf(P * n, full if self.g.random() < 0.5 else (P * n,))
        if out is not None:
            kwargs["out"] = out
        self.expect_result(ob, out, want, full if out is None else None)
        return (x,), kwargs

    def _allgather(self):
        return self._gathered(True)

    def _gather(self):
        return self._gathered(self.r == self.root)

    def block_shape(self, n):
        """x's shape for P blocks of n: (P, ...) (blocks are rows) or flat; and a block's
        result shape."""
        P = self.P
        if self.g.random() < 0.5:
            inner = self.shape(n, allow0d=True)
            return (P,) + inner, inner
        return (P * n,), ((P * n,) if P == 1 and False else (n,))

    def result_shape(self, xshape, n):
        """collie's rule: x.shape[1:] when x.shape[0] == P, else (n,)."""
        if len(xshape) >= 1 and xshape[0] == self.P:
            return xshape[1:]
        return (n,)

    def _reduce_scatter_block(self):
        n = self.count(self.P)
        xshape, _ = self.block_shape(n)
        rshape = self.result_shape(xshape, n)
        xs = self.inputs(self.P * n)
        want = fold(self.op, xs, self.dt)[self.r * n:(self.r + 1) * n]
        kwargs = {"op": op_arg(self.op)}
        if self.mine.random() < 0.25:   # in place: out = x[0] (x is overwritten)
            b = Buf(xs[self.r], xshape)
            out = b.flat[:n].reshape(rshape)
            self.desc_extra += " in place x %s" % (xshape,)
            kwargs["out"] = out
            self.result_check_view(b, out, want)
            return (b.arr,), kwargs
        xb, x = self.x_buf(xs[self.r], xshape)
        ob, out = self.out_buf(n, rshape)
        if out is not None:
            kwargs["out"] = out
        self.expect_result(ob, out, want, rshape)
        return (x,), kwargs

    def result_check_view(self, b, view, want):
        """In place into a view of b: the result is that view."""
        n = want.size
        self.expected_return = view

        def got():
            if self.result is not view:
                raise Failure("the result is not the out given")
            if not b.guards_ok():
                raise Failure("guard elements changed")
            return b.flat[:n]
        self.expect("result", got, want)

    def _alltoall(self):
        n = self.count(self.P)
        xshape, _ = self.block_shape(n)
        xs = self.inputs(self.P * n)
        r = self.r
        want = (np.concatenate([x[r * n:(r + 1) * n] for x in xs]) if n
                else np.zeros(0, self.dt))
        if self.mine.random() < 0.25:   # in place: out = x
            b = Buf(xs[r], xshape)
            self.desc_extra += " in place x %s" % (xshape,)
            self.expect_result(b, b.arr, want, xshape)
            return (b.arr,), {"out": b.arr}
        xb, x = self.x_buf(xs[r], xshape)
        ob, out = self.out_buf(self.P * n, xshape)
        self.expect_result(ob, out, want, xshape)
        return (x,), ({"out": out} if out is not None else {})

    def _scatter(self):
        n = self.count(self.P)
        xshape, _ = self.block_shape(n)
        rshape = self.result_shape(xshape, n)
        root, r = self.root, self.r
        data = self.input(root, self.P * n)
        want = data[r * n:(r + 1) * n]
        kwargs = {"root": root}
        if r == root:
            if self.mine.random() < 0.25:   # in place: out = x[root]
                b = Buf(data, xshape)
                view = b.flat[root * n:(root + 1) * n].reshape(rshape)
                self.desc_extra += " in place x %s" % (xshape,)
                kwargs["out"] = view
                self.unchanged.append((b, data))
                self.result_check_view_at(b, view, want, root * n)
                return (b.arr,), kwargs
            xb, x = self.x_buf(data, xshape)
        else:   # off the root: x gives the shape only, or None with out
            x = None if self.mine.random() < 0.5 else Buf(self.input(r, self.P * n),
                                                          xshape).arr
        ob, out = self.out_buf(n, rshape)
        if out is None and x is None:
            ob, out = self.out_buf_always(n, rshape, "C")
        if out is not None:
            kwargs["out"] = out
        self.expect_result(ob, out, want, rshape)
        return (x,), kwargs

    def result_check_view_at(self, b, view, want, at):
        self.expected_return = view
        def got():
            if self.result is not view:
                raise Failure("the result is not the out given")
            if not b.guards_ok():
                raise Failure("guard elements changed")
            return b.flat[at:at + want.size]
        self.expect("result", got, want)

    # v forms -----------------------------------------------------------------------------

    def counts(self, P):
        """counts: each rank's share of up to 1 MiB, some zero."""
        top = max(1, MAX_BYTES // self.dt.itemsize // max(P, 1))
        c = self.g.random()
        if c < 0.5:
            top = min(top, 17)
        return [0 if self.g.random() < 0.15 else int(self.g.integers(1, top + 1))
                for _ in range(P)]

    def displs(self, counts):
        """None (packed), or in reverse order with a gap before each block."""
        if self.g.random() < 0.5:
            return None, np.cumsum([0] + counts[:-1]).astype(int).tolist()
        d, at = [0] * len(counts), 0
        for j in reversed(range(len(counts))):
            at += int(self.g.integers(0, 3))
            d[j] = at
            at += counts[j]
        return d, d

    def layout(self, counts, displs, blocks, fill, extra=0):
        end = max([d + c for c, d in zip(counts, displs) if c] + [0])
        out = np.empty(end + extra, self.dt)
        out[...] = np.array(fill).astype(self.dt)
        for c, d, b in zip(counts, displs, blocks):
            out[d:d + c] = b
        return out

    def v_out(self, want):
        """A 1-D out for a v form's result `want` (at least its size: gaps keep the fill
        value), or None."""
        if self.mine.random() < 0.4:
            self.desc_extra += " out new"
            return None, None
        b = Buf(want, (want.size,))
        self.desc_extra += " out %d" % want.size
        return b, b.arr

    def _allgatherv(self):
        P, r = self.P, self.r
        counts = self.counts(P)
        dgiven, displs = self.displs(counts)
        xs = [self.input(j, counts[j]) for j in range(P)]
        fill = 9
        extra = int(self.mine.integers(0, 3))
        self.desc_extra += " counts %s displs %s" % (counts, dgiven)
        kwargs = {"displs": dgiven} if dgiven is not None else {}
        if self.mine.random() < 0.25:   # in place: x = out[displs[rank]:…]
            base = self.layout(counts, displs, [np.array(fill).astype(self.dt)] * P, fill,
                               extra)
            base[displs[r]:displs[r] + counts[r]] = xs[r]
            ob = Buf(base, (base.size,))
            kwargs["out"] = ob.arr
            x = ob.flat[displs[r]:displs[r] + counts[r]]
            self.desc_extra += " in place"
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill, extra), None)
            return (x, counts), kwargs
        xb, x = self.x_buf(xs[r], (counts[r],))
        if self.mine.random() < 0.6:
            want_out = self.layout(counts, displs, [np.array(fill).astype(self.dt)] * P, fill,
                                   extra)
            ob = Buf(want_out, (want_out.size,))
            kwargs["out"] = ob.arr
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill, extra), None)
        else:
            want = self.layout(counts, displs, xs, 0)
            self.expect_result_gaps(want, counts, displs)
        return (x, counts), kwargs

    def expect_result_gaps(self, want, counts, displs):
        """A new 1-D array: only the blocks are defined (gaps are whatever np.empty had)."""
        def got():
            res = self.result
            if not isinstance(res, np.ndarray) or res.shape != want.shape or \
                    res.dtype != self.dt:
                raise Failure("the result is %r; expected a 1-D array of %d %s" % (
                    getattr(res, "shape", res), want.size, self.dt))
            g = res.copy()
            mask = np.ones(want.size, bool)
            for c, d in zip(counts, displs):
                mask[d:d + c] = False
            g[mask] = want[mask]
            return g
        self.expect("result", got, want)

    def _reduce_scatter(self):
        P, r = self.P, self.r
        counts = self.counts(P)
        total = sum(counts)
        xs = self.inputs(total)
        at = sum(counts[:r])
        want = fold(self.op, xs, self.dt)[at:at + counts[r]] if total else xs[0][:0]
        kwargs = {"op": op_arg(self.op)}
        self.desc_extra += " counts %s" % counts
        if self.mine.random() < 0.25:   # in place: out = x[:counts[rank]]
            b = Buf(xs[r], (total,))
            out = b.flat[:counts[r]]
            self.desc_extra += " in place"
            kwargs["out"] = out
            self.result_check_view(b, out, want)
            return (b.arr, counts), kwargs
        xb, x = self.x_buf(xs[r], (total,))
        ob, out = self.out_buf(counts[r], (counts[r],))
        if out is not None:
            kwargs["out"] = out
        self.expect_result(ob, out, want, (counts[r],))
        return (x, counts), kwargs

    def _alltoallv(self):
        P, r = self.P, self.r
        symmetric = self.g.random() < 0.3   # then in place is possible
        C = [self.counts(P) for _ in range(P)]   # C[i][j]: i sends to j
        if symmetric:
            C = [[C[min(i, j)][max(i, j)] for j in range(P)] for i in range(P)]
        # each rank's displacements: drawn from its own team-shared generator
        sd = [self.displs(C[i]) for i in range(P)]           # send layout of rank i
        rd = [self.displs([C[i][j] for i in range(P)]) for j in range(P)]   # recv of j
        xs = [self.layout(C[i], sd[i][1], [self.input(i * P + j, C[i][j]) for j in range(P)],
                          0) for i in range(P)]
        recvcounts = [C[i][r] for i in range(P)]
        blocks = [xs[i][sd[i][1][r]:sd[i][1][r] + C[i][r]] for i in range(P)]
        fill = 4
        self.desc_extra += " send %s recv %s" % (C[r], recvcounts)
        if symmetric and self.mine.random() < 0.5:   # in place: out = x, recv layout
            # in place sends the receive layout's blocks: block j of x goes to rank j
            mine_blocks = [self.input(r * P + j, C[r][j]) for j in range(P)]
            base = self.layout(recvcounts, rd[r][1], mine_blocks, fill)
            b = Buf(base, (base.size,))
            # what arrives: rank i's block for r, in place laid out by rank i's recv layout
            want = self.layout(recvcounts, rd[r][1],
                               [self.input(i * P + r, C[i][r]) for i in range(P)], fill)
            self.desc_extra += " in place rdispls %s" % (rd[r][0],)
            kwargs = {"out": b.arr, "rdispls": rd[r][0]}
            if self.mine.random() < 0.5:
                kwargs["sdispls"] = rd[r][0]
            send = recvcounts if self.mine.random() < 0.5 else None
            self.expect_result(b, b.arr, want, None)
            return (b.arr, send, recvcounts), kwargs
        xb, x = self.x_buf(xs[r], (xs[r].size,))
        kwargs = {}
        if sd[r][0] is not None:
            kwargs["sdispls"] = sd[r][0]
        if rd[r][0] is not None:
            kwargs["rdispls"] = rd[r][0]
        if self.mine.random() < 0.6:
            pre = self.layout(recvcounts, rd[r][1], [np.array(fill).astype(self.dt)] * P,
                              fill, int(self.mine.integers(0, 3)))
            ob = Buf(pre, (pre.size,))
            kwargs["out"] = ob.arr
            want = pre.copy()
            for i in range(P):
                want[rd[r][1][i]:rd[r][1][i] + C[i][r]] = blocks[i]
            self.expect_result(ob, ob.arr, want, None)
        else:
            self.expect_result_gaps(self.layout(recvcounts, rd[r][1], blocks, 0),
                                    recvcounts, rd[r][1])
        return (x, C[r], recvcounts), kwargs

    def _gatherv(self):
        P, r, root = self.P, self.r, self.root
        counts = self.counts(P)
        dgiven, displs = self.displs(counts)
        xs = [self.input(j, counts[j]) for j in range(P)]
        self.desc_extra += " counts %s displs %s" % (counts, dgiven)
        fill = 6
        kwargs = {"root": root}
        if r != root:
            xb, x = self.x_buf(xs[r], (counts[r],))
            if self.mine.random() < 0.5:
                kwargs["counts"] = counts
            self.expect_none()
            return (x,), kwargs
        kwargs["counts"] = counts
        if dgiven is not None:
            kwargs["displs"] = dgiven
        if self.mine.random() < 0.3:   # in place: x = out[displs[root]:…]
            base = self.layout(counts, displs, [np.array(fill).astype(self.dt)] * P, fill)
            base[displs[r]:displs[r] + counts[r]] = xs[r]
            ob = Buf(base, (base.size,))
            kwargs["out"] = ob.arr
            self.desc_extra += " in place"
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill), None)
            return (ob.flat[displs[r]:displs[r] + counts[r]],), kwargs
        xb, x = self.x_buf(xs[r], (counts[r],))
        if self.mine.random() < 0.5:
            pre = self.layout(counts, displs, [np.array(fill).astype(self.dt)] * P, fill, 1)
            ob = Buf(pre, (pre.size,))
            kwargs["out"] = ob.arr
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill, 1), None)
        else:
            self.expect_result_gaps(self.layout(counts, displs, xs, 0), counts, displs)
        return (x,), kwargs

    def _scatterv(self):
        P, r, root = self.P, self.r, self.root
        counts = self.counts(P)
        dgiven, displs = self.displs(counts)
        blocks = [self.input(j, counts[j]) for j in range(P)]
        data = self.layout(counts, displs, blocks, 2)
        want = blocks[r]
        self.desc_extra += " counts %s displs %s" % (counts, dgiven)
        kwargs = {"root": root}
        if r == root:
            kwargs["counts"] = counts
            if dgiven is not None:
                kwargs["displs"] = dgiven
            if self.mine.random() < 0.3:   # in place: out = x[displs[root]:…]
                b = Buf(data, (data.size,))
                view = b.flat[displs[r]:displs[r] + counts[r]]
                self.unchanged.append((b, data))
                kwargs["out"] = view
                self.desc_extra += " in place"
                self.result_check_view_at(b, view, want, displs[r])
                return (b.arr,), kwargs
            xb, x = self.x_buf(data, (data.size,))
            ob, out = self.out_buf(counts[r], (counts[r],))
        elif self.mine.random() < 0.5:   # off the root: out
            ob, out = self.out_buf_always(counts[r], (counts[r],), "C")
            x = None
        else:                            # or counts and x (count and dtype)
            kwargs["counts"] = counts
            x, ob, out = np.zeros(3, self.dt), None, None
        if out is not None:
            kwargs["out"] = out
        self.expect_result(ob, out, want, (counts[r],))
        return (x,), kwargs

    # completion and checks ---------------------------------------------------------------

    def complete(self, how):
        """Completes a split-phase call: wait(), test() loop, or dropping the request (its
        deallocation waits: the result is then what the call returns, known up front)."""
        req = self.req
        if how == "test":
            spins = 0
            while not req.test(timeout_ms=int(self.mine.integers(0, 3))):
                spins += 1
            self.result = req.wait()
            if not req.done:
                raise Failure("Request.done is False after wait()")
        elif how == "drop":
            self.result = self.expected_return
            self.req = None
            del req
        else:
            self.result = req.wait()
        return self.result

    def verify(self):
        """Raises Failure with the first wrong element."""
        for what, got, want in self.checks:
            g = got()
            if want is None:
                continue
            want = np.asarray(want).reshape(-1)
            g = np.asarray(g).reshape(-1)
            if g.size != want.size:
                raise Failure("%s has %d elements; expected %d" % (what, g.size, want.size))
            bad = np.flatnonzero(~((g == want) | ((g != g) & (want != want))))
            if bad.size:
                i = bad[0]
                raise Failure("%s element %d is %r; expected %r (%d wrong of %d)" % (
                    what, i, g[i], want[i], bad.size, want.size))
        for b, flat in self.unchanged:
            if not b.guards_ok():
                raise Failure("an input's guard elements changed")
            bad = np.flatnonzero(b.flat != flat)
            if bad.size:
                raise Failure("input element %d changed: %r, was %r" % (
                    bad[0], b.flat[bad[0]], flat[bad[0]]))


# -- bad calls ----------------------------------------------------------------------------

def bad_calls(team, dt_int):
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


# -- the sequence -------------------------------------------------------------------------

TEAM_NAMES = {}


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
    TEAM_NAMES.update({0: "world", 1: "dup", 2: "even half", 3: "odd half"})
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


def bad_call(team, k):
    calls = bad_calls(team, None)
    what, fn, pattern = calls[rng(k, 8).integers(len(calls))]
    import re
    try:
        fn()
    except collie.CollieError as e:
        if not re.search(pattern, str(e)):
            raise Failure("bad call (%s) raised %r, expected a message matching %r"
                          % (what, str(e), pattern))
        return what
    raise Failure("bad call (%s) did not raise CollieError" % what)


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
    global SEED, RANK
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
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
            world.size, calls - start, SEED, "passed" if total == 0 else "FAILED", total),
            flush=True)
    collie.finalize()
    return 1 if total else 0


SEED = 1
RANK = 0

if __name__ == "__main__":
    sys.exit(main())
