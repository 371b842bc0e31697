"""torch.distributed on backend "collie": every collective, dtype and operation against a
reference each rank computes from every rank's known input (conftest.reference)."""
import datetime
import os
import time

import pytest
import torch
import torch.distributed as dist

import collie
from conftest import FLOATS, INTS, OPS, applicable, data, inputs, reference, size


def test_world(pg):
    assert dist.get_backend() == "collie"
    world = collie.world()
    assert (dist.get_rank(), dist.get_world_size()) == (world.rank, world.size)
    assert dist.get_world_size() == size()
    onehot = torch.zeros(size(), dtype=torch.int32)
    onehot[dist.get_rank()] = 1
    dist.all_reduce(onehot)
    assert (onehot == 1).all()          # every rank number taken once


def cases(ops, dtypes):
    """(op, dtype) pairs where torch defines op on dtype (bitwise ops: integers; AVG:
    floating point)."""
    return [pytest.param(op, dt, id="%s-%s" % (op, str(dt)[6:]))
            for op in ops for dt in dtypes if applicable(op, dt)]


@pytest.mark.parametrize("op,dtype", cases(OPS, INTS + FLOATS))
def test_all_reduce(pg, op, dtype):
    xs = inputs(op, dtype)
    t = xs[dist.get_rank()].clone()
    ptr = t.data_ptr()
    assert dist.all_reduce(t, op=getattr(dist.ReduceOp, op)) is None
    assert t.data_ptr() == ptr and t.dtype == dtype
    assert torch.equal(t, reference(op, xs))


def test_all_reduce_async(pg):
    """Several split-phase collectives in flight, completed through the Work objects."""
    xs = [inputs("SUM", torch.float32, shape=(1000 * (k + 1),), seed=k) for k in range(3)]
    ts = [x[dist.get_rank()].clone() for x in xs]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    b = data(dist.get_rank(), torch.int64, shape=(7,)) if dist.get_rank() == 0 else \
        torch.zeros(7, dtype=torch.int64)
    works.append(dist.broadcast(b, src=0, async_op=True))
    assert isinstance(works[0], collie.torch.CollieWork)
    for w in reversed(works):           # waited for out of start order
        assert w.wait() is True
        assert w.is_completed() and w.is_success() and w.exception() is None
    for t, x in zip(ts, xs):
        assert torch.equal(t, reference("SUM", x))
    assert torch.equal(b, data(0, torch.int64, shape=(7,)))
    assert works[0].result()[0] is ts[0]
    fut = dist.all_reduce(ts[0], async_op=True).get_future()
    assert fut.done() and torch.equal(fut.value()[0], reference("SUM", xs[0]) * size())


def test_all_reduce_views(pg):
    """A contiguous slice is reduced in place in its storage; a strided view goes through
    a copy that is written back; the rest of the storage is untouched."""
    rank = dist.get_rank()
    base = torch.full((4, 6), -1.0)
    base[1] = data(rank, torch.float32, shape=(6,))
    dist.all_reduce(base[1])
    assert torch.equal(base[1], reference("SUM", inputs("SUM", torch.float32, shape=(6,))))
    assert (base[0] == -1).all() and (base[2:] == -1).all()
    base = torch.full((5, 4), -1.0)
    base[:, 2] = data(rank, torch.float32, shape=(5,))
    dist.all_reduce(base[:, 2], op=dist.ReduceOp.MAX)
    assert torch.equal(base[:, 2], reference("MAX", inputs("MAX", torch.float32, shape=(5,))))
    assert (base[:, [0, 1, 3]] == -1).all()


def test_all_reduce_bool_complex_empty_scalar(pg):
    rank, P = dist.get_rank(), size()
    flags = [(torch.arange(8) + r) % 3 == 0 for r in range(P)]
    for op, ref in [(dist.ReduceOp.MAX, torch.logical_or), (dist.ReduceOp.MIN, torch.logical_and),
                    (dist.ReduceOp.SUM, torch.logical_or)]:
        t = flags[rank].clone()
        dist.all_reduce(t, op=op)
        expect = flags[0]
        for f in flags[1:]:
            expect = ref(expect, f)
        assert t.dtype == torch.bool and torch.equal(t, expect)
    zs = [torch.complex(data(r, torch.float32, (6,)), data(r, torch.float32, (6,), seed=5))
          for r in range(P)]
    z = zs[rank].clone()
    dist.all_reduce(z)
    assert torch.equal(z, sum(zs[1:], zs[0]))
    empty = torch.empty(0)
    dist.all_reduce(empty)
    assert empty.numel() == 0
    scalar = torch.tensor(float(rank + 1), dtype=torch.float64)   # 0-dimensional
    dist.all_reduce(scalar)
    assert scalar.dim() == 0 and scalar.item() == P * (P + 1) / 2


@pytest.mark.parametrize("dtype", [torch.int8, torch.int64, torch.uint8, torch.float16,
                                   torch.bfloat16, torch.float64, torch.bool,
                                   torch.complex64], ids=str)
def test_broadcast(pg, dtype):
    rank = dist.get_rank()
    for root in range(size()):
        src = data(root, torch.int64, shape=(4, 3), seed=root).to(dtype)
        t = src.clone() if rank == root else torch.zeros(4, 3, dtype=dtype)
        dist.broadcast(t, src=root)
        assert torch.equal(t, src)


@pytest.mark.parametrize("op,dtype", cases(["SUM", "MAX", "PRODUCT", "AVG"],
                                           [torch.int32, torch.bfloat16, torch.float32]))
def test_reduce(pg, op, dtype):
    rank = dist.get_rank()
    xs = inputs(op, dtype, shape=(9,))
    for root in range(size()):
        t = xs[rank].clone()
        dist.reduce(t, dst=root, op=getattr(dist.ReduceOp, op))
        if rank == root:
            assert torch.equal(t, reference(op, xs))
        else:
            assert torch.equal(t, xs[rank])     # a non-root's input is left as it was


def test_barrier(pg, tmp_path_factory):
    """No rank leaves the barrier before every rank has entered it: each rank creates a
    file before the barrier and counts them after it."""
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "collie-torch-barrier-%s"
                     % os.environ.get("COLLIE_JOB", "solo"))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, str(dist.get_rank())), "w").close()
    dist.barrier()
    assert len(os.listdir(d)) == size()
    dist.barrier()
    os.remove(os.path.join(d, str(dist.get_rank())))
    dist.barrier()
    if dist.get_rank() == 0:
        os.rmdir(d)


@pytest.mark.parametrize("dtype", [torch.int64, torch.bfloat16, torch.float32,
                                   torch.complex64], ids=str)
def test_all_gather(pg, dtype):
    rank, P = dist.get_rank(), size()
    xs = [data(r, torch.int64, shape=(2, 5), seed=1).to(dtype) for r in range(P)]
    outs = [torch.full((10,), 7).to(dtype) for _ in range(P)]    # other shape, same count
    dist.all_gather(outs, xs[rank])
    for r in range(P):
        assert torch.equal(outs[r], xs[r].reshape(-1))
    flat = torch.empty(P * 10, dtype=dtype)
    dist.all_gather_into_tensor(flat, xs[rank])
    assert torch.equal(flat, torch.cat([x.reshape(-1) for x in xs]))
    empty = torch.empty(0, dtype=dtype)
    dist.all_gather_into_tensor(empty, torch.empty(0, dtype=dtype))
    assert empty.numel() == 0


@pytest.mark.parametrize("op,dtype", cases(["SUM", "MAX", "AVG"],
                                           [torch.int32, torch.float16, torch.float32]))
def test_reduce_scatter(pg, op, dtype):
    rank, P = dist.get_rank(), size()
    blocks = [[data(r, dtype, shape=(6,), seed=b) for b in range(P)] for r in range(P)]
    out = torch.empty(6, dtype=dtype)
    dist.reduce_scatter(out, blocks[rank], op=getattr(dist.ReduceOp, op))
    expect = reference(op, [blocks[r][rank] for r in range(P)])
    assert torch.equal(out, expect)
    out2 = torch.empty(6, dtype=dtype)
    dist.reduce_scatter_tensor(out2, torch.cat(blocks[rank]), op=getattr(dist.ReduceOp, op))
    assert torch.equal(out2, expect)


def test_all_gather_in_place(pg):
    """all_gather_into_tensor with the input as the output's block `rank` (as FSDP does):
    collie runs it in place; a non-contiguous output goes through a copy."""
    rank, P = dist.get_rank(), size()
    xs = [data(r, torch.float32, shape=(6,), seed=2) for r in range(P)]
    out = torch.zeros(P * 6)
    out[rank * 6:(rank + 1) * 6] = xs[rank]
    dist.all_gather_into_tensor(out, out[rank * 6:(rank + 1) * 6])
    assert torch.equal(out, torch.cat(xs))
    wide = torch.zeros(P * 6, 2)
    dist.all_gather_into_tensor(wide[:, 1], xs[rank])      # strided output
    assert torch.equal(wide[:, 1], torch.cat(xs)) and (wide[:, 0] == 0).all()


@pytest.mark.parametrize("dtype", [torch.int32, torch.bfloat16, torch.float64, torch.bool],
                         ids=str)
def test_all_to_all(pg, dtype):
    """all_to_all with blocks of different sizes (rank i sends (i + 2j) % 3 + 1 rows to j)."""
    rank, P = dist.get_rank(), size()

    def block(i, j):
        return data(i, torch.int64, shape=((i + 2 * j) % 3 + 1, 2), seed=j).to(dtype)

    outs = [torch.empty((j + 2 * rank) % 3 + 1, 2, dtype=dtype) for j in range(P)]
    dist.all_to_all(outs, [block(rank, j) for j in range(P)])
    for j in range(P):
        assert torch.equal(outs[j], block(j, rank))


def test_all_to_all_single(pg):
    rank, P = dist.get_rank(), size()
    x = torch.stack([data(rank, torch.float32, shape=(3,), seed=j) for j in range(P)])
    out = torch.empty(P, 3)
    dist.all_to_all_single(out, x)                          # even: collie's alltoall
    for j in range(P):
        assert torch.equal(out[j], data(j, torch.float32, shape=(3,), seed=rank))

    def rows(i, j):                                          # rows rank i sends to j
        return (i + j) % 2 + j % 3

    send = [rows(rank, j) for j in range(P)]
    recv = [rows(j, rank) for j in range(P)]
    x = torch.cat([torch.full((send[j], 2), 100 * rank + j, dtype=torch.int64)
                   for j in range(P)])
    out = torch.full((sum(recv), 2), -1, dtype=torch.int64)
    dist.all_to_all_single(out, x, output_split_sizes=recv, input_split_sizes=send)
    expect = torch.cat([torch.full((recv[j], 2), 100 * j + rank, dtype=torch.int64)
                        for j in range(P)])
    assert torch.equal(out, expect)


def test_empty_tensors(pg):
    """Empty tensors (torch gives them any strides: torch.zeros(3, 0) has (1, 1)), bfloat16
    ones through DLPack: they were refused as "not contiguous"."""
    for dtype in (torch.bfloat16, torch.float32):
        for t in (torch.zeros(3, 0, dtype=dtype), torch.zeros(4, dtype=dtype)[::2][:0]):
            dist.all_reduce(t)
            dist.reduce(t, dst=0, op=dist.ReduceOp.PRODUCT)
            dist.broadcast(t, src=0)
            assert t.numel() == 0


def test_all_to_all_single_even_on_some_ranks(pg):
    """Split sizes that are even on rank 0 only (it sends and receives 2 rows to and from
    everyone) and uneven elsewhere: every rank must make the same alltoallv (rank 0 made an
    alltoall: COLLIE_ERR_MISMATCH "the forms (block and v) differ")."""
    rank, P = dist.get_rank(), size()
    if P < 2:
        pytest.skip("needs 2 ranks")

    def rows(i, j):                                          # rows rank i sends to j
        return 2 if i == 0 or j == 0 else 1 + (i + j) % 2

    send = [rows(rank, j) for j in range(P)]
    recv = [rows(j, rank) for j in range(P)]
    x = torch.cat([torch.full((send[j], 3), 10 * rank + j, dtype=torch.float32)
                   for j in range(P)])
    out = torch.zeros(sum(recv), 3)
    dist.all_to_all_single(out, x, output_split_sizes=recv, input_split_sizes=send)
    expect = torch.cat([torch.full((recv[j], 3), 10 * j + rank, dtype=torch.float32)
                        for j in range(P)])
    assert torch.equal(out, expect)


@pytest.mark.parametrize("dtype", [torch.int8, torch.bfloat16, torch.complex64], ids=str)
def test_gather_scatter(pg, dtype):
    rank, P = dist.get_rank(), size()
    xs = [data(r, torch.int64, shape=(2, 3), seed=3).to(dtype) for r in range(P)]
    for root in range(P):
        outs = [torch.zeros(2, 3, dtype=dtype) for _ in range(P)] if rank == root else None
        dist.gather(xs[rank], gather_list=outs, dst=root)
        if rank == root:
            for r in range(P):
                assert torch.equal(outs[r], xs[r])
        t = torch.zeros(2, 3, dtype=dtype)
        dist.scatter(t, scatter_list=xs if rank == root else None, src=root)
        assert torch.equal(t, xs[rank])
    t = torch.zeros(2, 3, dtype=dtype)
    w = dist.scatter(t, scatter_list=xs if rank == 0 else None, src=0, async_op=True)
    assert w.wait() and torch.equal(t, xs[rank])



def test_work_timeout_then_completes(pg):
    """Rank 0 starts a broadcast the others join 1 s later: its wait with a 50 ms timeout
    raises COLLIE_TIMEOUT and leaves the work active; is_completed() is False until the
    others join; the next wait() completes it with the right data."""
    if size() < 2:
        pytest.skip("needs a rank that joins late")
    rank = dist.get_rank()
    src = torch.arange(6, dtype=torch.int32) * 3
    if rank == 0:
        t = src.clone()
        w = dist.broadcast(t, src=0, async_op=True)
        b = torch.zeros(6, dtype=torch.int32)
        w2 = dist.broadcast(b, src=1, async_op=True)     # rank 1 sends only after its sleep
        with pytest.raises(collie.CollieError, match="did not complete within 50 ms") as e:
            w2.wait(timeout=datetime.timedelta(milliseconds=50))
        assert e.value.status == 1 and not w2.is_completed()
        assert w2.wait() and w.wait()
        assert torch.equal(b, src + 1)
    else:
        time.sleep(1.0)
        t = torch.zeros(6, dtype=torch.int32)
        dist.broadcast(t, src=0)
        b = src + 1 if rank == 1 else torch.zeros(6, dtype=torch.int32)
        dist.broadcast(b, src=1)
        assert torch.equal(t, src) and torch.equal(b, src + 1)
