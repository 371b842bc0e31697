"""CollieProcessGroup: a torch.distributed ProcessGroup whose collectives run on a collie
team (the world of collie.init(): collie-run's ranks, or MPI_COMM_WORLD under mpirun).

Every collective starts collie split-phase requests (iallreduce, ireduce, ibcast, ibarrier)
on the tensors' own memory and returns a CollieWork; with async_op=False torch waits for it
at once.  All arguments are checked before anything starts, so a bad argument raises
collie.CollieError on the rank that gave it.

    allreduce, allreduce_coalesced   iallreduce in place (AVG: a sum, then / size)
    broadcast                        ibcast in place
    reduce                           ireduce in place at the root
    barrier                          ibarrier
    allgather, all-gather-into-one   one ibcast per rank (rank r's block from root r)
    reduce_scatter, -into-one        one ireduce per rank (block r reduced at root r)

The last two are built from collie's rooted collectives until the C library has allgather
and reduce-scatter of its own: _gather and _scatter below are where those plug in.  alltoall,
gather, scatter and point-to-point raise CollieError (collie has none of them yet).
"""
import torch.distributed as dist

from .._errors import CollieError
from ._tensors import check_same, export, prepare, reduction_for
from ._work import CollieWork

_UNSUPPORTED = -5
_BAD_ARG = -1


def _single(tensors, fn):
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise CollieError("collie backend: %s: expected a non-empty list of tensors" % fn,
                          _BAD_ARG)
    return list(tensors)


class CollieProcessGroup(dist.ProcessGroup):
    """The process group of backend "collie" over a collie.Team."""

    def __init__(self, team):
        super().__init__(team.rank, team.size)
        self._team = team

    @property
    def team(self):
        return self._team

    def getBackendName(self):
        return "collie"

    def __repr__(self):
        return "<collie.torch.CollieProcessGroup rank %d of %d>" % (self._team.rank,
                                                                     self._team.size)

    # -- helpers ---------------------------------------------------------------------------

    def _root(self, opts, fn):
        root = int(getattr(opts, "rootRank", 0))
        if not 0 <= root < self._team.size:
            raise CollieError("collie backend: %s: root %d is not a rank of this group "
                              "(size %d)" % (fn, root, self._team.size), _BAD_ARG)
        if int(getattr(opts, "rootTensor", 0)) != 0:
            raise CollieError("collie backend: %s: rootTensor must be 0 (one tensor per "
                              "rank)" % fn, _BAD_ARG)
        return root

    def _avg(self, name, prep):
        """For AVG: the division that follows the sum (on the result's own dtype)."""
        if name != "avg":
            return []
        size = self._team.size
        return [lambda: prep.contig.div_(size)]

    @staticmethod
    def _op(name):
        return "sum" if name == "avg" else name

    # -- reductions ------------------------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(_single(tensors, "allreduce"), op, "allreduce")

    def allreduce_coalesced(self, tensors, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(_single(tensors, "allreduce_coalesced"), op,
                               "allreduce_coalesced")

    def _allreduce(self, tensors, op, fn):
        preps = [prepare(t, fn, "tensor", reducing=True) for t in tensors]
        names = [reduction_for(p.tensor, op, fn) for p in preps]
        finish = []
        for p, name in zip(preps, names):
            finish += self._avg(name, p) + [p.finish]
        reqs = [self._allreduce_one(export(p.buf), self._op(name))
                for p, name in zip(preps, names)]
        return CollieWork(reqs, finish, tensors, fn)

    def _allreduce_one(self, x, op):
        return self._team.iallreduce(x, out=x, op=op)

    def _reduce_one(self, x, root, at_root, op):
        return self._team.ireduce(x, root=root, out=x if at_root else None, op=op)

    def reduce(self, tensors, opts=None):
        tensors = _single(tensors, "reduce")
        root = self._root(opts, "reduce")
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        preps = [prepare(t, "reduce", "tensor", reducing=True) for t in tensors]
        names = [reduction_for(p.tensor, op, "reduce") for p in preps]
        at_root = self._team.rank == root
        finish = []
        for p, name in zip(preps, names):
            finish += (self._avg(name, p) + [p.finish]) if at_root else []
        reqs = [self._reduce_one(export(p.buf), root, at_root, self._op(name))
                for p, name in zip(preps, names)]
        return CollieWork(reqs, finish, tensors, "reduce")

    # -- data movement ---------------------------------------------------------------------

    def broadcast(self, tensors, opts=None):
        tensors = _single(tensors, "broadcast")
        root = self._root(opts, "broadcast")
        preps = [prepare(t, "broadcast", "tensor") for t in tensors]
        reqs = [self._team.ibcast(export(p.buf), root=root) for p in preps]
        return CollieWork(reqs, [p.finish for p in preps], tensors, "broadcast")

    def barrier(self, opts=None):
        return CollieWork([self._team.ibarrier()], [], [], "barrier")

    def allgather(self, output_tensors, input_tensors, opts=None):
        inputs = _single(input_tensors, "allgather")
        if len(output_tensors) != len(inputs):
            raise CollieError("collie backend: allgather: %d output lists for %d inputs"
                              % (len(output_tensors), len(inputs)), _BAD_ARG)
        size, rank = self._team.size, self._team.rank
        reqs, finish = [], []
        plans = []
        for outs, inp in zip(output_tensors, inputs):
            if len(outs) != size:
                raise CollieError("collie backend: allgather: %d output tensors for a group "
                                  "of %d" % (len(outs), size), _BAD_ARG)
            check_same(outs, inp, "allgather", "output_tensors")
            src = prepare(inp, "allgather", "input")
            plans.append(([prepare(o, "allgather", "output") for o in outs], src))
        for preps, src in plans:
            preps[rank].buf.reshape(-1).copy_(src.buf.reshape(-1))
            reqs += self._gather([p.buf for p in preps])
            finish += [p.finish for p in preps]
        return CollieWork(reqs, finish, list(output_tensors), "allgather")

    def _blocks(self, big, small, fn, what):
        """big (P times small's elements, small's dtype) as P contiguous collie blocks."""
        size = self._team.size
        if big.dtype != small.dtype or big.numel() != size * small.numel():
            raise CollieError("collie backend: %s: %s is %s with %d elements; expected %s with "
                              "%d x %d" % (fn, what, big.dtype, big.numel(), small.dtype, size,
                                           small.numel()), _BAD_ARG)
        prep = prepare(big, fn, what)
        flat = prep.buf.reshape(-1)
        n = flat.numel() // size
        return prep, [flat[r * n:(r + 1) * n] for r in range(size)]

    def _allgather_base(self, output, input, opts=None):
        src = prepare(input, "all_gather_into_tensor", "input")
        prep, blocks = self._blocks(output, input, "all_gather_into_tensor", "output")
        blocks[self._team.rank].copy_(src.buf.reshape(-1))
        return CollieWork(self._gather(blocks), [prep.finish], [output],
                          "all_gather_into_tensor")

    def _gather(self, blocks):
        """Block r (this rank's own block already filled in) from rank r to every rank: one
        ibcast per rank."""
        return [self._team.ibcast(export(b), root=r) for r, b in enumerate(blocks)]

    all_gather_single = _allgather_base   # the name in newer torch

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        outputs = _single(output_tensors, "reduce_scatter")
        if len(input_tensors) != len(outputs):
            raise CollieError("collie backend: reduce_scatter: %d input lists for %d outputs"
                              % (len(input_tensors), len(outputs)), _BAD_ARG)
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        size, rank = self._team.size, self._team.rank
        plans = []
        for out, ins in zip(outputs, input_tensors):
            if len(ins) != size:
                raise CollieError("collie backend: reduce_scatter: %d input tensors for a "
                                  "group of %d" % (len(ins), size), _BAD_ARG)
            check_same(ins, out, "reduce_scatter", "input_tensors")
            dst = prepare(out, "reduce_scatter", "output", reducing=True)
            name = reduction_for(dst.tensor, op, "reduce_scatter")
            blocks = [prepare(t, "reduce_scatter", "input", reducing=True).buf for t in ins]
            plans.append((dst, name, blocks))
        reqs, finish = [], []
        for dst, name, blocks in plans:
            reqs += self._scatter(blocks, dst.buf, name)
            finish += self._avg(name, dst) + [dst.finish]
        return CollieWork(reqs, finish, outputs, "reduce_scatter")

    def _scatter(self, blocks, out, name):
        """Block r of every rank reduced into out at rank r: one ireduce per rank."""
        rank = self._team.rank
        out = export(out)
        return [self._team.ireduce(export(b), root=r, out=out if r == rank else None,
                                   op=self._op(name)) for r, b in enumerate(blocks)]

    def _reduce_scatter_base(self, output, input, opts=None):
        fn = "reduce_scatter_tensor"
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        dst = prepare(output, fn, "output", reducing=True)
        name = reduction_for(dst.tensor, op, fn)
        _, blocks = self._blocks(input, output, fn, "input")
        reqs = self._scatter(blocks, dst.buf.reshape(-1), name)
        return CollieWork(reqs, self._avg(name, dst) + [dst.finish], [output], fn)

    reduce_scatter_single = _reduce_scatter_base   # the name in newer torch

    # -- what collie does not have ---------------------------------------------------------

    def _unsupported(self, fn):
        raise CollieError("collie backend: %s is not supported: collie has allreduce, "
                          "reduce, broadcast, barrier, allgather and reduce_scatter (use a "
                          "second process group, e.g. new_group(backend=\"gloo\"), for the "
                          "rest)" % fn, _UNSUPPORTED)

    def alltoall(self, *args, **kwargs):
        self._unsupported("all_to_all")

    def alltoall_base(self, *args, **kwargs):
        self._unsupported("all_to_all_single")

    all_to_all_single = alltoall_base

    def gather(self, *args, **kwargs):
        self._unsupported("gather")

    def scatter(self, *args, **kwargs):
        self._unsupported("scatter")

    def send(self, *args, **kwargs):
        self._unsupported("send")

    def recv(self, *args, **kwargs):
        self._unsupported("recv")

    def recv_anysource(self, *args, **kwargs):
        self._unsupported("recv (any source)")
