"""soak.py — a seeded random sequence of torch.distributed collectives on backend "collie",
checked call by call against a reference computed with torch on the CPU (the torch
counterpart of python/tests/soak.py).

    collie-run -n P python soak.py [CALLS [SEED]]        (defaults: 200 calls, seed 1)

Every rank draws the same sequence from the seed.  Per call: the collective (all_reduce,
broadcast, reduce, all_gather, all_gather_into_tensor (also in place: the input is the
output's block `rank`), reduce_scatter_tensor (also with the output a block of the
input), reduce_scatter, all_to_all_single with and
without split sizes, all_to_all, gather, scatter, barrier), the group (the default group,
or one from new_group over every rank listed in another order, which torch sorts: a
proper subset is refused by the backend, checked once at the start), the dtype (float32,
float64, float16, bfloat16, complex64, int64, int32, int16, int8, uint8, bool, and
uint16/32/64 where torch has them, with numpy references), the op (SUM,
PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR where the backend defines it for the dtype), the
size (0 to 1 MiB per tensor), the shape (0-d, 1-d, 2-d), whether each tensor is
contiguous or a strided / transposed view (the backend copies and writes back), and the
form: blocking, or async_op=True, the work completed at the end of its window of 4 calls
in an order of each rank's own — wait(), a loop of is_completed(), or get_future().

Inputs are torch's generator on (seed, call, rank), so each rank computes every rank's
input and the expected result by itself, with torch ops in the tensors' dtype.  Values
keep every reference exact in any order: integers wrap (two's complement, as collie's
arithmetic); floats are small integers for SUM/PRODUCT/AVG (AVG: the exact sum divided
in the dtype, as the backend does); MIN/MAX take any floats; bool ops are logical.
Results are compared exactly, and inputs must not change (except where written) — except
complex AVG, compared within a relative 1e-6: torch's complex division (the backend's
div_ by the size, as the reference's) is not correctly rounded, and its vectorized and
scalar loops give results an ulp apart for the same element.

Output: rank 0 prints "torch soak: P ranks, N calls, seed S: passed (0 failures)"; a rank
that finds a wrong result prints the call and the first wrong element.  Exit status 1 on
any failure.  SOAK_FROM=K replays from call K (rounded down to its window of 4);
SOAK_VERBOSE=1 prints every call on rank 0.
"""
import os
import sys

import torch
import torch.distributed as dist

import collie
import collie.torch  # noqa: F401  (registers the backend)

WINDOW = 4
MAX_BYTES = 1 << 20
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
          torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
# torch's unsigned types beyond uint8 (torch >= 2.3): no arithmetic of their own in torch,
# so their references are computed in numpy
UNSIGNED = [getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)]
DTYPES += UNSIGNED
_NP_OPS = {"SUM": "add", "PRODUCT": "multiply", "MIN": "minimum", "MAX": "maximum",
           "BAND": "bitwise_and", "BOR": "bitwise_or", "BXOR": "bitwise_xor"}
COLLS = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
         "reduce_scatter_tensor", "reduce_scatter", "all_to_all_single", "all_to_all",
         "gather", "scatter", "barrier"]


class Failure(Exception):
    pass


def gen(*key):
    """A generator on (SEED, *key) — the same on every rank for the same key."""
    g = torch.Generator()
    h = SEED
    for k in key:
        h = (h * 1000003 + int(k) + 7) % (1 << 62)
    g.manual_seed(h)
    return g


def ops_for(dt):
    if dt == torch.bool:
        return ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
    if dt.is_complex:
        return ["SUM", "AVG"]
    if dt.is_floating_point:
        return ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]
    return ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


def values(g, n, dt, op):
    """n elements of dtype dt whose reduction by op is exact in any order."""
    if dt == torch.bool:
        return torch.randint(0, 2, (n,), generator=g).bool()
    if dt.is_complex:
        return torch.complex(torch.randint(-16, 17, (n,), generator=g).float(),
                             torch.randint(-16, 17, (n,), generator=g).float()).to(dt)
    if dt.is_floating_point:
        if op in ("MIN", "MAX"):
            return torch.randn(n, generator=g).to(dt)
        if op == "PRODUCT":
            return torch.randint(-3, 4, (n,), generator=g).to(dt)
        lim = 8 if dt == torch.bfloat16 else 64 if dt == torch.float16 else 1 << 16
        return torch.randint(-lim, lim + 1, (n,), generator=g).to(dt)
    if dt in UNSIGNED:   # every bit pattern of the width, through int64's bits
        bits = torch.randint(-(1 << 62), 1 << 62, (n,), generator=g) * 2 + 1
        v = bits.numpy().view("uint64").astype(str(dt)[6:])
        v[(torch.rand(n, generator=g) < 0.2).numpy()] = 0
        return torch.from_numpy(v)
    info = torch.iinfo(dt)
    v = torch.randint(info.min, info.max, (n,), generator=g, dtype=torch.int64) \
        if dt != torch.int64 else torch.randint(-(1 << 62), 1 << 62, (n,), generator=g) * 2 + 1
    v = v.to(dt)
    v[torch.rand(n, generator=g) < 0.2] = 0
    return v


def combine(op, a, b):
    if a.dtype in UNSIGNED:
        import numpy as np
        with np.errstate(all="ignore"):
            return torch.from_numpy(np.asarray(getattr(np, _NP_OPS[op])(a.numpy(), b.numpy())))
    if a.dtype == torch.bool:
        return {"SUM": torch.logical_or, "MAX": torch.logical_or, "BOR": torch.logical_or,
                "PRODUCT": torch.logical_and, "MIN": torch.logical_and,
                "BAND": torch.logical_and, "BXOR": torch.logical_xor}[op](a, b)
    f = {"SUM": torch.add, "AVG": torch.add, "PRODUCT": torch.mul, "MIN": torch.minimum,
         "MAX": torch.maximum, "BAND": torch.bitwise_and, "BOR": torch.bitwise_or,
         "BXOR": torch.bitwise_xor}[op]
    return f(a, b).to(a.dtype)


def fold(op, xs):
    acc = xs[0].clone()
    for x in xs[1:]:
        acc = combine(op, acc, x)
    if op == "AVG":
        acc = acc / len(xs)
    return acc


def place(flat, shape, layout):
    """A tensor of `shape` holding flat's elements (row-major), laid out as asked:
    contiguous, a transposed view (2-d), or every other element of a bigger buffer."""
    if layout == "transposed" and len(shape) == 2:
        return flat.reshape(shape).t().contiguous().t()
    if layout == "strided" and flat.numel() > 0:
        base = torch.zeros(flat.numel() * 2, dtype=flat.dtype)
        base[::2] = flat
        return base[::2].reshape(shape) if len(shape) <= 1 else \
            base.reshape(shape[0], -1)[:, ::2]
    return flat.clone().reshape(shape)


class Call:
    def __init__(self, k, coll, group, gname, async_op):
        self.k, self.coll, self.group, self.gname, self.async_op = k, coll, group, gname, async_op
        self.P, self.r = dist.get_world_size(group), dist.get_rank(group)
        g = gen(k, 1)
        self.g = g
        self.mine = gen(k, 2, self.r)
        self.dt = DTYPES[int(torch.randint(len(DTYPES), (1,), generator=g))]
        ops = ops_for(self.dt)
        self.op = ops[int(torch.randint(len(ops), (1,), generator=g))]
        self.root = int(torch.randint(self.P, (1,), generator=g))
        self.checks = []
        self.extra = ""

    def rand(self):
        return float(torch.rand(1, generator=self.g))

    def mine_rand(self):
        return float(torch.rand(1, generator=self.mine))

    def count(self, per=1):
        c = self.rand()
        if c < 0.06:
            return 0
        maxn = max(1, MAX_BYTES // self.dt.itemsize // per)
        if c < 0.5:
            return int(torch.randint(1, min(17, maxn) + 1, (1,), generator=self.g))
        return int(torch.exp(torch.rand(1, generator=self.g) * torch.log(torch.tensor(
            float(maxn)))))

    def shape(self, n, allow0d=True):
        c = self.rand()
        if n == 1 and allow0d and c < 0.3:
            return ()
        divs = [d for d in range(2, 65) if n % d == 0]
        if c < 0.5 or not divs:
            return (n,)
        d = divs[int(torch.randint(len(divs), (1,), generator=self.g))]
        return (d, n // d)

    def layout(self):
        c = self.mine_rand()
        return "contiguous" if c < 0.6 else "transposed" if c < 0.8 else "strided"

    def input(self, j, n):
        return values(gen(self.k, 3, j), n, self.dt, self.op)

    def per_rank(self, per=1):
        """n elements for `per` parts of a tensor, a shape of them, and every rank's input."""
        n = self.count(per)
        shape = self.shape(n)
        return n, shape, [self.input(j, n).reshape(shape) for j in range(self.P)]

    def tensor(self, flat, shape, what):
        lay = self.layout()
        t = place(flat, shape, lay)
        if lay != "contiguous":
            self.extra += " %s %s" % (what, lay)
        return t

    def expect(self, what, t, want):
        self.checks.append((what, t, want))

    def describe(self):
        return "call %d: %s%s group %s (rank %d of %d) %s op %s root %d%s" % (
            self.k, self.coll, " async" if self.async_op else "", self.gname, self.r,
            self.P, str(self.dt)[6:], self.op, self.root, self.extra)

    def start(self):
        self.work = getattr(self, "_" + self.coll)()

    def kw(self):
        return {"group": self.group, "async_op": self.async_op}

    # the collectives ---------------------------------------------------------------------

    def _all_reduce(self):
        n, shape, xs = self.per_rank()
        t = self.tensor(xs[self.r].reshape(-1), shape, "tensor")
        self.expect("tensor", t, fold(self.op, xs))
        return dist.all_reduce(t, op=getattr(dist.ReduceOp, self.op), **self.kw())

    def _reduce(self):
        n, shape, xs = self.per_rank()
        t = self.tensor(xs[self.r].reshape(-1), shape, "tensor")
        self.expect("tensor", t, fold(self.op, xs) if self.r == self.root else xs[self.r])
        return dist.reduce(t, dst=self.root, op=getattr(dist.ReduceOp, self.op), **self.kw())

    def _broadcast(self):
        n = self.count()
        shape = self.shape(n)
        t = self.tensor(self.input(self.r, n), shape, "tensor")
        self.expect("tensor", t, self.input(self.root, n).reshape(shape))
        return dist.broadcast(t, src=self.root, **self.kw())

    def _barrier(self):
        return dist.barrier(**self.kw())

    def _all_gather(self):
        n, shape, xs = self.per_rank(self.P)
        x = self.tensor(xs[self.r].reshape(-1), shape, "input")
        outs = [self.tensor(torch.zeros(n, dtype=self.dt), shape, "out%d" % j)
                for j in range(self.P)]
        for j in range(self.P):
            self.expect("output %d" % j, outs[j], xs[j])
        self.expect("input", x, xs[self.r])
        return dist.all_gather(outs, x, **self.kw())

    def _all_gather_into_tensor(self):
        n = self.count(self.P)
        xs = [self.input(j, n) for j in range(self.P)]
        full = torch.cat(xs) if n else torch.zeros(0, dtype=self.dt)
        stacked = self.rand() < 0.5
        if self.mine_rand() < 0.3:   # in place: the input is the output's block `rank`
            out = torch.zeros(self.P * n, dtype=self.dt)
            out[self.r * n:(self.r + 1) * n] = xs[self.r]
            x = out[self.r * n:(self.r + 1) * n]
            self.extra += " in place"
        else:
            x = self.tensor(xs[self.r], (n,), "input")
            out = torch.zeros(self.P * n, dtype=self.dt)
            self.expect("input", x, xs[self.r])
        if stacked:
            out = out.view(self.P, n)
            if not self.extra.endswith("in place") and self.layout() == "transposed" and n > 1:
                out = torch.zeros(n, self.P, dtype=self.dt).t()
                self.extra += " output transposed"
        self.expect("output", out, full.reshape(out.shape))
        return dist.all_gather_into_tensor(out, x, **self.kw())

    def _reduce_scatter_tensor(self):
        n = self.count(self.P)
        xs = [self.input(j, self.P * n) for j in range(self.P)]
        want = fold(self.op, xs)[self.r * n:(self.r + 1) * n]
        shape = (self.P, n) if self.rand() < 0.5 else (self.P * n,)
        if self.mine_rand() < 0.2:   # the output is the input's block `rank` (FSDP's way)
            x = xs[self.r].clone().reshape(shape)
            out = x.reshape(-1)[self.r * n:(self.r + 1) * n]
            self.extra += " output in input"
        else:
            x = self.tensor(xs[self.r], shape, "input")
            out = self.tensor(torch.zeros(n, dtype=self.dt), (n,), "output")
            self.expect("input", x, xs[self.r].reshape(shape))
        self.expect("output", out, want)
        return dist.reduce_scatter_tensor(out, x, op=getattr(dist.ReduceOp, self.op),
                                          **self.kw())

    def _reduce_scatter(self):
        n = self.count(self.P)
        shape = self.shape(n)
        xs = [[self.input(i * self.P + j, n).reshape(shape) for j in range(self.P)]
              for i in range(self.P)]   # xs[i][j]: rank i's input for rank j
        ins = [self.tensor(xs[self.r][j].reshape(-1), shape, "in%d" % j)
               for j in range(self.P)]
        out = self.tensor(torch.zeros(n, dtype=self.dt), shape, "output")
        self.expect("output", out, fold(self.op, [xs[i][self.r] for i in range(self.P)]))
        return dist.reduce_scatter(out, ins, op=getattr(dist.ReduceOp, self.op), **self.kw())

    def splits(self):
        """S[i][j]: rows rank i sends to rank j; often even on some ranks only."""
        P = self.P
        top = 4 if self.rand() < 0.6 else 200
        base = int(torch.randint(0, top + 1, (1,), generator=self.g))
        S = [[base] * P for _ in range(P)]
        for i in range(P):
            if self.rand() < 0.5:   # this rank's row uneven
                S[i] = [int(v) for v in torch.randint(0, top + 1, (P,), generator=self.g)]
        return S

    def _all_to_all_single(self):
        P, r = self.P, self.r
        cols = int(torch.randint(1, 5, (1,), generator=self.g))
        if self.dt.itemsize * cols > 64:
            cols = 1
        if self.rand() < 0.4:   # no split sizes: rows / P each
            rows = P * int(torch.randint(0, 50, (1,), generator=self.g))
            S = [[rows // P] * P for _ in range(P)]
            given = False
        else:
            S = self.splits()
            given = True
        blocks = [[self.input(i * P + j, S[i][j] * cols).reshape(S[i][j], cols)
                   for j in range(P)] for i in range(P)]
        xin = torch.cat(blocks[r]) if sum(S[r]) else torch.zeros(0, cols, dtype=self.dt)
        want = torch.cat([blocks[i][r] for i in range(P)])
        x = self.tensor(xin.reshape(-1), tuple(xin.shape), "input")
        out = self.tensor(torch.zeros(want.numel(), dtype=self.dt), tuple(want.shape), "output")
        self.expect("output", out, want)
        self.expect("input", x, xin)
        self.extra += " splits %s" % (S if given else "none")
        if given:
            return dist.all_to_all_single(out, x, output_split_sizes=[S[i][r] for i in range(P)],
                                          input_split_sizes=S[r], **self.kw())
        return dist.all_to_all_single(out, x, **self.kw())

    def _all_to_all(self):
        P, r = self.P, self.r
        S = self.splits()
        ins = [self.tensor(self.input(r * P + j, S[r][j]), (S[r][j],), "in%d" % j)
               for j in range(P)]
        outs = [self.tensor(torch.zeros(S[i][r], dtype=self.dt), (S[i][r],), "out%d" % i)
                for i in range(P)]
        for i in range(P):
            self.expect("output %d" % i, outs[i], self.input(i * P + r, S[i][r]))
        self.extra += " sizes %s" % S
        return dist.all_to_all(outs, ins, **self.kw())

    def _gather(self):
        n, shape, xs = self.per_rank(self.P)
        x = self.tensor(xs[self.r].reshape(-1), shape, "input")
        outs = None
        if self.r == self.root:
            outs = [self.tensor(torch.zeros(n, dtype=self.dt), shape, "out%d" % j)
                    for j in range(self.P)]
            for j in range(self.P):
                self.expect("gather_list %d" % j, outs[j], xs[j])
        self.expect("input", x, xs[self.r])
        return dist.gather(x, gather_list=outs, dst=self.root, **self.kw())

    def _scatter(self):
        n, shape, blocks = self.per_rank(self.P)
        out = self.tensor(torch.zeros(n, dtype=self.dt), shape, "output")
        ins = None
        if self.r == self.root:
            ins = [self.tensor(b.reshape(-1), shape, "in%d" % j) for j, b in enumerate(blocks)]
            for j in range(self.P):
                self.expect("scatter_list %d" % j, ins[j], blocks[j])
        self.expect("output", out, blocks[self.r])
        return dist.scatter(out, scatter_list=ins, src=self.root, **self.kw())

    # completion and checks ---------------------------------------------------------------

    def complete(self, how):
        w = self.work
        if how == "poll":
            while not w.is_completed():
                pass
            if not w.is_success():
                raise w.exception()
        elif how == "future":
            w.get_future().wait()
        else:
            if w.wait() is not True:
                raise Failure("wait() did not return True")

    def verify(self):
        for what, t, want in self.checks:
            if t.shape != want.shape or t.dtype != want.dtype:
                raise Failure("%s is %s %s; expected %s %s" % (what, tuple(t.shape), t.dtype,
                                                               tuple(want.shape), want.dtype))
            a, b = t.reshape(-1), want.reshape(-1)
            if self.dt.is_complex and self.op == "AVG":
                # torch's complex division by the size (the backend's div_, and the
                # reference's) is not correctly rounded and its vectorized and scalar loops
                # differ by an ulp: 1-2 ulps apart are equal here
                bad = (~torch.isclose(a, b, rtol=1e-6, atol=0)).nonzero()
            else:
                bad = (a != b).nonzero()
            if bad.numel():
                i = int(bad[0])
                raise Failure("%s element %d is %s; expected %s (%d wrong of %d)" % (
                    what, i, a[i].item(), b[i].item(), bad.numel(), b.numel()))


def check(c):
    try:
        c.verify()
        return 0
    except Failure as e:
        print("torch soak: FAILED on rank %d: %s: %s" % (RANK, c.describe(), e), flush=True)
        return 1


def finish(pending, key):
    mine = gen(key, 5, RANK)
    order = torch.randperm(len(pending), generator=mine).tolist()
    for i in order:
        how = ["wait", "poll", "future"][int(torch.randint(3, (1,), generator=mine))]
        pending[i].complete(how)
    return sum(check(c) for c in pending)


def subset_refused():
    """new_group of a proper subset: CollieError on its members, a non-member elsewhere."""
    P = dist.get_world_size()
    if P < 2:
        return
    try:
        g = dist.new_group([0])
        if dist.get_rank() == 0:
            raise Failure("new_group([0]) did not raise on its member")
        if g != dist.GroupMember.NON_GROUP_MEMBER:
            raise Failure("new_group([0]) gave a group to a non-member")
    except collie.CollieError as e:
        if dist.get_rank() != 0 or "only the whole world" not in str(e):
            raise


def run_window(groups, w, first, last, verbose):
    pending, failures = [], 0
    for k in range(first, last):
        g = gen(k, 0)
        group, gname = groups[int(torch.randint(len(groups), (1,), generator=g))]
        coll = COLLS[int(torch.randint(len(COLLS), (1,), generator=g))]
        c = Call(k, coll, group, gname, async_op=float(torch.rand(1, generator=g)) < 0.4)
        try:
            c.start()
        except Exception:
            print("torch soak: rank %d: %s raised:" % (RANK, c.describe()), flush=True)
            raise
        if verbose and RANK == 0:
            print("torch soak: " + c.describe(), flush=True)
        if c.async_op:
            pending.append(c)
        else:
            failures += check(c)
    return failures + finish(pending, w)


def main():
    global SEED, RANK
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    start = int(os.environ.get("SOAK_FROM", "0")) // WINDOW * WINDOW
    verbose = os.environ.get("SOAK_VERBOSE") == "1"
    torch.set_num_threads(1)
    collie.torch.init()
    RANK = dist.get_rank()
    P = dist.get_world_size()
    subset_refused()
    groups = [(dist.group.WORLD, "default"),
              (dist.new_group(list(range(P))[::-1], backend="collie"), "new_group(reversed)")]
    failures = 0
    for w in range(start // WINDOW, (calls + WINDOW - 1) // WINDOW):
        failures += run_window(groups, w, w * WINDOW, min(calls, (w + 1) * WINDOW), verbose)
    total = torch.tensor([failures], dtype=torch.int64)
    dist.all_reduce(total)
    if RANK == 0:
        print("torch soak: %d ranks, %d calls, seed %d: %s (%d failures)" % (
            P, calls - start, SEED, "passed" if total.item() == 0 else "FAILED",
            total.item()), flush=True)
    dist.destroy_process_group()
    return 1 if total.item() else 0


SEED = 1
RANK = 0

if __name__ == "__main__":
    sys.exit(main())
