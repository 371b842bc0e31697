"""Bad input to the collie backend raises collie.CollieError naming what was wrong, on
every rank alike and before anything starts (so the next collective still works)."""
import pytest
import torch
import torch.distributed as dist

import collie
from conftest import data, inputs, reference, size


def _still_works():
    t = data(dist.get_rank(), torch.float32, shape=(4,))
    dist.all_reduce(t)
    assert torch.equal(t, reference("SUM", inputs("SUM", torch.float32, shape=(4,))))


def test_device_refused(pg):
    t = torch.empty(4, device="meta")
    with pytest.raises(collie.CollieError, match="is on meta; collie handles CPU tensors"):
        dist.all_reduce(t)
    _still_works()


@pytest.mark.parametrize("op,dtype,message", [
    ("BAND", torch.float32, "ReduceOp.BAND is not defined on torch.float32"),
    ("AVG", torch.int32, "AVG needs a floating-point tensor"),
])
def test_op_refused(pg, op, dtype, message):
    t = torch.ones(3, dtype=dtype)
    with pytest.raises(collie.CollieError, match=message):
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    _still_works()


def test_complex_max_refused(pg):
    """dist.all_reduce refuses MAX on complex itself; the process group does too."""
    opts = dist.AllreduceOptions()
    opts.reduceOp = dist.ReduceOp.MAX
    with pytest.raises(collie.CollieError, match="not defined on complex"):
        pg.allreduce([torch.ones(3, dtype=torch.complex64)], opts)
    _still_works()


def test_premul_sum_refused(pg):
    make = getattr(dist, "_make_nccl_premul_sum", None)
    if make is None:
        pytest.skip("this torch has no PREMUL_SUM")
    with pytest.raises(collie.CollieError, match="ReduceOp.PREMUL_SUM is not supported"):
        dist.all_reduce(torch.ones(3), op=make(2.0))
    _still_works()


def test_dtype_refused(pg):
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8")
    t = torch.zeros(4, dtype=torch.float8_e4m3fn)
    with pytest.raises(collie.CollieError, match="float8_e4m3fn, which collie does not"):
        dist.broadcast(t, src=0)
    _still_works()


def test_shape_refused(pg):
    outs = [torch.empty(3) for _ in range(size())]
    with pytest.raises(collie.CollieError, match="3 elements; expected torch.float32 with 4"):
        dist.all_gather(outs, torch.ones(4))
    with pytest.raises(collie.CollieError, match="expected torch.float32 with"):
        dist.all_gather_into_tensor(torch.empty(size() * 4 + 1), torch.ones(4))
    _still_works()


def test_split_sizes_refused(pg):
    P = size()
    with pytest.raises(collie.CollieError, match="input split sizes .* do not split its"):
        dist.all_to_all_single(torch.empty(P), torch.ones(P), [1] * P, [2] * P)
    if P > 1:
        with pytest.raises(collie.CollieError, match="not a multiple of the group's"):
            dist.all_to_all_single(torch.empty(P + 1), torch.ones(P + 1))
    if P > 1:
        with pytest.raises(collie.CollieError, match="all_to_all: 1 input tensors for a "
                           "group of %d" % P):
            dist.all_to_all([torch.empty(1) for _ in range(P)], [torch.ones(1)])
    _still_works()


def test_point_to_point_unsupported(pg):
    if size() < 2:
        pytest.skip("needs a peer")
    with pytest.raises(collie.CollieError, match="send is not supported"):
        dist.send(torch.ones(2), dst=(dist.get_rank() + 1) % size())
    _still_works()


def test_sub_group_refused(pg):
    """A group of some ranks fails on its members (collie has no sub-teams for torch yet);
    one of all ranks works."""
    if size() < 2:
        pytest.skip("needs a proper subset of the ranks")
    if dist.get_rank() == 0:
        with pytest.raises(collie.CollieError, match="only the whole world"):
            dist.new_group([0])
    else:
        assert dist.new_group([0]) == dist.GroupMember.NON_GROUP_MEMBER
    whole = dist.new_group(list(range(size())))
    t = torch.ones(2)
    dist.all_reduce(t, group=whole)
    assert (t == size()).all()
