"""soak_vcolls.py — the soak's calls of the v forms (python/tests/soak.py): counts per rank,
displacements packed or with gaps.  Each _<coll> method draws the call's buffers, records
what it must give (CallBase in soak_call.py) and returns the call's (args, kwargs)."""
import numpy as np

from soak_data import MAX_BYTES, Buf, fold, op_arg


class VColls:
    """allgatherv, reduce_scatter, alltoallv, gatherv, scatterv: counts per rank."""

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

    def filled(self, counts, displs, fill, extra=0):
        """The layout of counts and displs (and `extra` elements after it), all `fill`."""
        return self.layout(counts, displs, [np.array(fill).astype(self.dt)] * len(counts),
                           fill, extra)

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
            base = self.filled(counts, displs, fill, extra)
            base[displs[r]:displs[r] + counts[r]] = xs[r]
            ob = Buf(base, (base.size,))
            kwargs["out"] = ob.arr
            x = ob.flat[displs[r]:displs[r] + counts[r]]
            self.desc_extra += " in place"
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill, extra), None)
            return (x, counts), kwargs
        xb, x = self.x_buf(xs[r], (counts[r],))
        if self.mine.random() < 0.6:
            want_out = self.filled(counts, displs, fill, extra)
            ob = Buf(want_out, (want_out.size,))
            kwargs["out"] = ob.arr
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill, extra), None)
        else:
            want = self.layout(counts, displs, xs, 0)
            self.expect_result_gaps(want, counts, displs)
        return (x, counts), kwargs

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
            pre = self.filled(recvcounts, rd[r][1], fill, int(self.mine.integers(0, 3)))
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
            base = self.filled(counts, displs, fill)
            base[displs[r]:displs[r] + counts[r]] = xs[r]
            ob = Buf(base, (base.size,))
            kwargs["out"] = ob.arr
            self.desc_extra += " in place"
            self.expect_result(ob, ob.arr, self.layout(counts, displs, xs, fill), None)
            return (ob.flat[displs[r]:displs[r] + counts[r]],), kwargs
        xb, x = self.x_buf(xs[r], (counts[r],))
        if self.mine.random() < 0.5:
            pre = self.filled(counts, displs, fill, 1)
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
                self.result_check_view(b, view, want, displs[r])
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
