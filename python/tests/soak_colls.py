"""soak_colls.py — the soak's calls of the collectives with one count (python/tests/soak.py):
the elementwise ones and the block ones.  Each _<coll> method draws the call's buffers,
records what it must give (CallBase in soak_call.py) and returns the call's (args, kwargs)."""
import numpy as np

from soak_data import BFLOAT16, Buf, as_kind, fold, op_arg


class ElementwiseColls:
    """allreduce, reduce, scan, exscan, bcast, barrier: x of any shape and order."""

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


class BlockColls:
    """allgather, gather, reduce_scatter_block, alltoall, scatter: equal blocks."""

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
        return (P * n,), (n,)

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
                self.result_check_view(b, view, want, root * n)
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
