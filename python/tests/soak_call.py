"""soak_call.py — what every call of the soak (python/tests/soak.py) shares: its draws
(dtype, op, root, counts, shapes, buffer kinds), its buffers, the results it expects,
its completion (split-phase forms) and the checks of results, guards and inputs."""
import numpy as np

from soak_data import (ARRAY_CODES, BFLOAT16, FLOATS, INTS, MAX_BYTES, REDUCING, TEAM_NAMES,
                       Buf, Failure, as_kind, ops_for, rng, values)


class CallBase:
    """One collective call: its draws, buffers, expected results and checks; the calls
    themselves (the methods _<coll>) are in soak_colls.py and soak_vcolls.py."""

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

    def out_buf_always(self, n, shape, order):
        b = Buf(np.zeros(n, self.dt), shape, order, fill=np.array(5).astype(self.dt))
        return b, b.arr

    def result_check_view(self, b, view, want, at=0):
        """In place into a view of b from element `at`: the result is that view."""
        self.expected_return = view

        def got():
            if self.result is not view:
                raise Failure("the result is not the out given")
            if not b.guards_ok():
                raise Failure("guard elements changed")
            return b.flat[at:at + want.size]
        self.expect("result", got, want)

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
