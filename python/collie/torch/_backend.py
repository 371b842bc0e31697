"""CollieProcessGroup: a torch.distributed ProcessGroup whose collectives run on a collie
team (the world of collie.init(): collie-run's ranks, or MPI_COMM_WORLD under mpirun).

Every collective starts collie split-phase requests on the tensors' own memory and returns
a CollieWork; with async_op=False torch waits for it at once.  All arguments are checked
before anything starts, so a bad argument raises collie.CollieError on the rank that gave it.

    allreduce, allreduce_coalesced   iallreduce in place (AVG: a sum, then / size)
    broadcast                        ibcast in place
    reduce                           ireduce in place at the root
    barrier                          ibarrier
    allgather, reduce_scatter, alltoall, gather, scatter and their single-tensor forms:
                                     collie's own calls (_blocks.py)

Point-to-point (send, recv) raises CollieError: collie has only collectives.
"""
import torch.distributed as dist

from .._errors import CollieError
from ._blocks import BlockCollectives
from ._tensors import export, nonempty_list, prepare, reduction_for
from ._work import CollieWork

_UNSUPPORTED = -5
_BAD_ARG = -1


class CollieProcessGroup(BlockCollectives, dist.ProcessGroup):
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
        return self._allreduce(nonempty_list(tensors, "allreduce"), op, "allreduce")

    def allreduce_coalesced(self, tensors, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        return self._allreduce(nonempty_list(tensors, "allreduce_coalesced"), op,
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
        tensors = nonempty_list(tensors, "reduce")
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
        tensors = nonempty_list(tensors, "broadcast")
        root = self._root(opts, "broadcast")
        preps = [prepare(t, "broadcast", "tensor") for t in tensors]
        reqs = [self._team.ibcast(export(p.buf), root=root) for p in preps]
        return CollieWork(reqs, [p.finish for p in preps], tensors, "broadcast")

    def barrier(self, opts=None):
        return CollieWork([self._team.ibarrier()], [], [], "barrier")

    # -- what collie does not have ---------------------------------------------------------

    def _unsupported(self, fn):
        raise CollieError("collie backend: %s is not supported: collie has collectives "
                          "only (use a second process group, e.g. new_group(backend="
                          "\"gloo\"), for point-to-point)" % fn, _UNSUPPORTED)

    def send(self, *args, **kwargs):
        self._unsupported("send")

    def recv(self, *args, **kwargs):
        self._unsupported("recv")

    def recv_anysource(self, *args, **kwargs):
        self._unsupported("recv (any source)")
