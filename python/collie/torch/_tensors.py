"""Tensors and reduction operations of torch.distributed as collie sees them.

A CPU tensor reaches collie without a copy (its storage is read and written in place):
as a numpy view, or through DLPack for bfloat16.  What collie has no datatype for is mapped onto one it has, never copied:
bool -> uint8 (reductions become bitwise and/or/xor of 0/1), complex -> its real view
(float pairs; only elementwise sum/avg are meaningful on it).  A non-contiguous tensor goes
through a contiguous copy that is written back when the operation completes.
"""
import torch
import torch.distributed as dist

from .._errors import CollieError

# collie's datatypes (the ones collie.Team accepts through DLPack).
SUPPORTED = {
    torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
    torch.float16, torch.bfloat16, torch.float32, torch.float64,
}
for _name in ("uint16", "uint32", "uint64"):   # torch >= 2.3 has them
    if hasattr(torch, _name):
        SUPPORTED.add(getattr(torch, _name))

# torch.distributed.ReduceOp -> collie op name.  AVG is a sum divided afterwards.
_OPS = {"SUM": "sum", "PRODUCT": "prod", "MIN": "min", "MAX": "max", "BAND": "band",
        "BOR": "bor", "BXOR": "bxor", "AVG": "avg"}
# On bool tensors (0/1 bytes): the logical meaning of each operation.
_BOOL_OPS = {"sum": "bor", "max": "bor", "bor": "bor", "prod": "band", "min": "band",
             "band": "band", "bxor": "bxor"}


_KINDS = {getattr(dist.ReduceOp.RedOpType, n): n for n in dist.ReduceOp.RedOpType.__members__}


def _torch_name(op):
    """ReduceOp.MAX (or ReduceOp(ReduceOp.MAX)) -> "MAX"."""
    return _KINDS.get(getattr(op, "op", op), str(op))


def op_name(op, fn):
    """(torch's name, collie's name) of a torch ReduceOp; CollieError for one collie lacks."""
    name = _torch_name(op)
    if name in _OPS:
        return name, _OPS[name]
    raise CollieError("collie backend: %s: ReduceOp.%s is not supported (collie has SUM, "
                      "PRODUCT, MIN, MAX, BAND, BOR, BXOR and AVG)" % (fn, name), -5)


class Prepared:
    """One tensor made ready for collie: .buf is what collie reads/writes (a view of
    .contig, which is the tensor itself when it is contiguous); finish() writes a contiguous
    copy back into the caller's tensor."""

    __slots__ = ("tensor", "contig", "buf")

    def __init__(self, tensor, contig, buf):
        self.tensor = tensor
        self.contig = contig
        self.buf = buf

    def finish(self):
        if self.contig is not self.tensor:
            self.tensor.copy_(self.contig)


def _numpy_works():
    try:
        torch.zeros(1).numpy()
        return True
    except Exception:   # a torch without numpy support: DLPack for everything
        return False


_NUMPY = _numpy_works()


def export(t):
    """What collie is given for tensor t (contiguous, a collie dtype): a numpy view of it
    (collie's fastest path, about 5 us less per call than DLPack) or, for bfloat16 (numpy
    has no such dtype), the tensor itself through DLPack.  Both share t's memory."""
    return t.numpy() if _NUMPY and t.dtype != torch.bfloat16 else t


def _check_device(t, fn, what):
    if not isinstance(t, torch.Tensor):
        raise CollieError("collie backend: %s: %s is a %s, not a torch.Tensor"
                          % (fn, what, type(t).__name__), -1)
    if t.device.type != "cpu":
        raise CollieError("collie backend: %s: %s is on %s; collie handles CPU tensors only "
                          "(for GPUs use e.g. init_process_group(\"cpu:collie,cuda:nccl\"))"
                          % (fn, what, t.device), -1)
    if t.is_sparse or t.layout != torch.strided:
        raise CollieError("collie backend: %s: %s has layout %s; collie needs dense tensors"
                          % (fn, what, t.layout), -5)


def _collie_view(t, fn, what, reducing):
    """t (contiguous, detached) as a tensor of a collie datatype, sharing its memory."""
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    if t.is_complex():
        return torch.view_as_real(t)
    if t.dtype not in SUPPORTED:
        raise CollieError("collie backend: %s: %s has dtype %s, which collie does not %s"
                          % (fn, what, t.dtype, "reduce" if reducing else "move"), -5)
    return t


def prepare(t, fn, what, reducing=False):
    """A Prepared for tensor t (checked: CPU, dense, a dtype collie handles)."""
    _check_device(t, fn, what)
    d = t.detach()
    contiguous = d if d.is_contiguous() else d.contiguous()
    return Prepared(d, contiguous, _collie_view(contiguous, fn, what, reducing))


def reduction_for(t, op, fn):
    """The collie op for reducing tensor t with torch op `op` (bool, complex, AVG rules)."""
    torch_name, name = op_name(op, fn)
    what = "collie backend: %s: ReduceOp.%s" % (fn, torch_name)
    if t.dtype == torch.bool:
        if name not in _BOOL_OPS:
            raise CollieError("%s is not defined on bool tensors" % what, -1)
        return _BOOL_OPS[name]
    if t.is_complex() and name not in ("sum", "avg"):
        raise CollieError("%s is not defined on complex tensors" % what, -1)
    if name == "avg" and not (t.is_floating_point() or t.is_complex()):
        raise CollieError("%s needs a floating-point tensor (this one is %s)" % (what, t.dtype),
                          -1)
    if name in ("band", "bor", "bxor") and (t.is_floating_point() or t.is_complex()):
        raise CollieError("%s is not defined on %s tensors" % (what, t.dtype), -1)
    return name


def nonempty_list(tensors, fn):
    """tensors as a list; CollieError unless it is a non-empty list or tuple."""
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise CollieError("collie backend: %s: expected a non-empty list of tensors" % fn, -1)
    return list(tensors)


def check_same(tensors, ref, fn, what):
    """Every tensor in `tensors` has ref's dtype and number of elements."""
    for i, t in enumerate(tensors):
        _check_device(t, fn, "%s[%d]" % (what, i))
        if t.dtype != ref.dtype or t.numel() != ref.numel():
            raise CollieError("collie backend: %s: %s[%d] is %s with %d elements; expected %s "
                              "with %d like the input" % (fn, what, i, t.dtype, t.numel(),
                                                          ref.dtype, ref.numel()), -1)
