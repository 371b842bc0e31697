"""The collie backend's collectives over P blocks (one per rank), each on one collie
split-phase call (CollieProcessGroup inherits them from BlockCollectives):

    allgather                  iallgather into one flat buffer, copied out to the P outputs
    all_gather_single          iallgather straight into the output tensor (in place when the
    (all_gather_into_tensor)   input is the output's block `rank`, as FSDP passes it)
    reduce_scatter             the P inputs copied into one buffer, ireduce_scatter_block
    reduce_scatter_single      ireduce_scatter_block from the input tensor into the output
    alltoall (all_to_all)      the inputs copied into one buffer, ialltoallv, copied out
    all_to_all_single          ialltoall without split sizes, else ialltoallv with the
                               split sizes (rows of dim 0)
    gather                     igather into a flat buffer at the root, copied out
    scatter                    the root's P inputs copied into one buffer, iscatter

P separate tensors are not one collie buffer: lists go through a flat buffer (one copy,
as gloo does); the single-tensor forms use the tensors' memory directly.
all_to_all_single: the call form follows whether split sizes are given, never their values
(even sizes on one rank and uneven ones on another must still all be alltoallv); a rank
that passes sizes while another passes none makes collie report a mismatch (alltoallv
against alltoall) — pass the sizes on every rank or on none.
"""
import torch
import torch.distributed as dist

from .._errors import CollieError
from ._tensors import check_same, export, nonempty_list, prepare, reduction_for
from ._work import CollieWork

_BAD_ARG = -1


def _flat(t):
    return t.reshape(-1)    # a view: prepare() made the tensor contiguous


def _cat(preps):
    """The prepared tensors' collie views one after another in a new flat tensor."""
    return torch.cat([_flat(p.buf) for p in preps])


def _copy_out(flat, preps):
    """The step that copies block r of flat into preps[r] (and on into a non-contiguous
    original tensor)."""
    def run():
        at = 0
        for p in preps:
            n = p.buf.numel()
            _flat(p.buf).copy_(flat[at:at + n])
            at += n
            p.finish()
    return run


def _overlap(a, b):
    pa, pb = a.data_ptr(), b.data_ptr()
    na, nb = a.numel() * a.element_size(), b.numel() * b.element_size()
    return na and nb and pa < pb + nb and pb < pa + na


def _even(splits, rows, size, fn, what):
    """Split sizes of dim 0 (torch's empty list: rows / size each)."""
    if not splits:
        if rows % size:
            raise CollieError("collie backend: %s: %s has %d rows, not a multiple of the group's "
                              "%d ranks (pass split sizes)" % (fn, what, rows, size), _BAD_ARG)
        return [rows // size] * size
    splits = [int(s) for s in splits]
    if len(splits) != size or min(splits) < 0 or sum(splits) != rows:
        raise CollieError("collie backend: %s: %s split sizes %s do not split its %d rows "
                          "into %d parts" % (fn, what, splits, rows, size), _BAD_ARG)
    return splits


class BlockCollectives:
    """Mixin of CollieProcessGroup: needs self._team, self._root(opts, fn),
    self._avg(name, prep) and self._op(name)."""

    def _count(self, tensors, fn, what):
        if len(tensors) != self._team.size:
            raise CollieError("collie backend: %s: %d %s for a group of %d" % (
                fn, len(tensors), what, self._team.size), _BAD_ARG)

    def _big(self, big, small, fn, what, reducing=False):
        """big (P times small's elements, small's dtype), prepared."""
        size = self._team.size
        if big.dtype != small.dtype or big.numel() != size * small.numel():
            raise CollieError("collie backend: %s: %s is %s with %d elements; expected %s with "
                              "%d x %d" % (fn, what, big.dtype, big.numel(), small.dtype, size,
                                           small.numel()), _BAD_ARG)
        return prepare(big, fn, what, reducing=reducing)

    # -- allgather -------------------------------------------------------------------------

    def allgather(self, output_tensors, input_tensors, opts=None):
        fn = "allgather"
        inputs = nonempty_list(input_tensors, fn)
        if len(output_tensors) != len(inputs):
            raise CollieError("collie backend: allgather: %d output lists for %d inputs"
                              % (len(output_tensors), len(inputs)), _BAD_ARG)
        plans = []
        for outs, inp in zip(output_tensors, inputs):
            self._count(outs, fn, "output tensors")
            check_same(outs, inp, fn, "output_tensors")
            plans.append((prepare(inp, fn, "input"), [prepare(o, fn, "output") for o in outs]))
        reqs, finish = [], []
        for src, preps in plans:
            flat = torch.empty(self._team.size * src.buf.numel(), dtype=src.buf.dtype)
            reqs.append(self._team.iallgather(export(_flat(src.buf)), out=export(flat)))
            finish.append(_copy_out(flat, preps))
        return CollieWork(reqs, finish, list(output_tensors), fn)

    def _allgather_base(self, output, input, opts=None):
        fn = "all_gather_into_tensor"
        src = prepare(input, fn, "input")
        dst = self._big(output, input, fn, "output")
        req = self._team.iallgather(export(_flat(src.buf)), out=export(_flat(dst.buf)))
        return CollieWork([req], [dst.finish], [output], fn)

    all_gather_single = _allgather_base   # the name in newer torch

    # -- reduce_scatter --------------------------------------------------------------------

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        fn = "reduce_scatter"
        outputs = nonempty_list(output_tensors, fn)
        if len(input_tensors) != len(outputs):
            raise CollieError("collie backend: reduce_scatter: %d input lists for %d outputs"
                              % (len(input_tensors), len(outputs)), _BAD_ARG)
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        plans = []
        for out, ins in zip(outputs, input_tensors):
            self._count(ins, fn, "input tensors")
            check_same(ins, out, fn, "input_tensors")
            dst = prepare(out, fn, "output", reducing=True)
            name = reduction_for(dst.tensor, op, fn)
            plans.append((dst, name, [prepare(t, fn, "input", reducing=True) for t in ins]))
        reqs, finish = [], []
        for dst, name, srcs in plans:
            reqs.append(self._team.ireduce_scatter_block(
                export(_cat(srcs)), out=export(_flat(dst.buf)), op=self._op(name)))
            finish += self._avg(name, dst) + [dst.finish]
        return CollieWork(reqs, finish, outputs, fn)

    def _reduce_scatter_base(self, output, input, opts=None):
        fn = "reduce_scatter_tensor"
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        dst = prepare(output, fn, "output", reducing=True)
        name = reduction_for(dst.tensor, op, fn)
        src = self._big(input, output, fn, "input", reducing=True)
        x = _flat(src.buf)
        if _overlap(x, dst.buf):   # collie in place would overwrite all of the input
            x = x.clone()
        req = self._team.ireduce_scatter_block(export(x), out=export(_flat(dst.buf)),
                                               op=self._op(name))
        return CollieWork([req], self._avg(name, dst) + [dst.finish], [output], fn)

    reduce_scatter_single = _reduce_scatter_base   # the name in newer torch

    # -- all_to_all ------------------------------------------------------------------------

    def alltoall(self, output_tensors, input_tensors, opts=None):
        fn = "all_to_all"
        self._count(output_tensors, fn, "output tensors")
        self._count(input_tensors, fn, "input tensors")
        ins = [prepare(t, fn, "input_tensor_list[%d]" % j) for j, t in enumerate(input_tensors)]
        outs = [prepare(t, fn, "output_tensor_list[%d]" % j)
                for j, t in enumerate(output_tensors)]
        recv = [p.buf.numel() for p in outs]
        flat = torch.empty(sum(recv), dtype=outs[0].buf.dtype)
        req = self._team.ialltoallv(export(_cat(ins)), [p.buf.numel() for p in ins], recv,
                                    out=export(flat))
        return CollieWork([req], [_copy_out(flat, outs)], list(output_tensors), fn)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes,
                          opts=None):
        fn = "all_to_all_single"
        size = self._team.size
        src = prepare(input, fn, "input")
        dst = prepare(output, fn, "output")
        if src.buf.dtype != dst.buf.dtype:
            raise CollieError("collie backend: %s: input is %s, output %s" % (
                fn, input.dtype, output.dtype), _BAD_ARG)
        rows_in = input.shape[0] if input.dim() else 1
        rows_out = output.shape[0] if output.dim() else 1
        sin = _even(input_split_sizes, rows_in, size, fn, "input")
        sout = _even(output_split_sizes, rows_out, size, fn, "output")
        x, y = _flat(src.buf), _flat(dst.buf)
        # By whether sizes are given, not by their values: each rank sees only its own, and
        # a rank whose sizes happen to be even must make the alltoallv its peers make.
        if not input_split_sizes and not output_split_sizes:
            if x.numel() != y.numel():
                raise CollieError("collie backend: %s: without split sizes input and output "
                                  "need the same number of elements (%d, %d)"
                                  % (fn, x.numel(), y.numel()), _BAD_ARG)
            req = self._team.ialltoall(export(x), out=export(y))
        else:
            per_in = x.numel() // rows_in if rows_in else 0
            per_out = y.numel() // rows_out if rows_out else 0
            req = self._team.ialltoallv(export(x), [s * per_in for s in sin],
                                        [s * per_out for s in sout], out=export(y))
        return CollieWork([req], [dst.finish], [output], fn)

    alltoall_base = all_to_all_single   # the name in older torch

    # -- gather, scatter -------------------------------------------------------------------

    def gather(self, output_tensors, input_tensors, opts=None):
        fn = "gather"
        inputs = nonempty_list(input_tensors, fn)
        root = self._root(opts, fn)
        if len(inputs) != 1:
            raise CollieError("collie backend: gather: one input tensor per rank, not %d"
                              % len(inputs), _BAD_ARG)
        src = prepare(inputs[0], fn, "input")
        x = export(_flat(src.buf))
        if self._team.rank != root:
            return CollieWork([self._team.igather(x, root=root)], [], [], fn)
        if len(output_tensors) != 1:
            raise CollieError("collie backend: gather: expected one gather_list at the root",
                              _BAD_ARG)
        outs = output_tensors[0]
        self._count(outs, fn, "tensors in gather_list")
        check_same(outs, inputs[0], fn, "gather_list")
        preps = [prepare(o, fn, "gather_list") for o in outs]
        flat = torch.empty(self._team.size * src.buf.numel(), dtype=src.buf.dtype)
        req = self._team.igather(x, root=root, out=export(flat))
        return CollieWork([req], [_copy_out(flat, preps)], list(output_tensors), fn)

    def scatter(self, output_tensors, input_tensors, opts=None):
        fn = "scatter"
        outputs = nonempty_list(output_tensors, fn)
        root = self._root(opts, fn)
        if len(outputs) != 1:
            raise CollieError("collie backend: scatter: one output tensor per rank, not %d"
                              % len(outputs), _BAD_ARG)
        dst = prepare(outputs[0], fn, "output")
        x = None
        if self._team.rank == root:
            if len(input_tensors) != 1:
                raise CollieError("collie backend: scatter: expected one scatter_list at the "
                                  "root", _BAD_ARG)
            self._count(input_tensors[0], fn, "tensors in scatter_list")
            check_same(input_tensors[0], outputs[0], fn, "scatter_list")
            x = export(_cat([prepare(t, fn, "scatter_list") for t in input_tensors[0]]))
        req = self._team.iscatter(x, root=root, out=export(_flat(dst.buf)))
        return CollieWork([req], [dst.finish], outputs, fn)
