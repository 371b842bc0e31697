"""The collectives of issue 16 from Python — allgather(v), reduce_scatter(_block), alltoall(v),
gather(v), scatter(v), scan, exscan — blocking and split-phase, new arrays, out=, in place,
each checked against a numpy reference computed from every rank's known input (conftest.data)."""
import array
import functools

import numpy as np
import pytest

import collie
from conftest import DLPackOnly, data

REFS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def inputs(world, dtype, shape, seed=0):
    return [data(r, dtype, shape, seed) for r in range(world.size)]


def fold(op, xs):
    with np.errstate(over="ignore"):
        return functools.reduce(lambda a, b: REFS[op](a, b).astype(a.dtype), xs)


def layout(counts, displs, fill, dtype, blocks, length=None):
    """A 1-D array of `fill` (of `length`, or just long enough) with blocks[j] at displs[j]
    (the v forms' reference)."""
    end = max([d + c for c, d in zip(counts, displs) if c] + [0])
    out = np.full(end if length is None else length, fill, dtype=dtype)
    for c, d, b in zip(counts, displs, blocks):
        out[d:d + c] = b
    return out


def gapped(counts):
    """Displacements in reverse rank order with a gap of one element before each block."""
    displs, at = [0] * len(counts), 0
    for j in reversed(range(len(counts))):
        at += 1
        displs[j] = at
        at += counts[j]
    return displs


@pytest.mark.parametrize("dtype", ["int8", "uint64", "float16", "float64"])
def test_allgather(world, dtype):
    P, r = world.size, world.rank
    xs = inputs(world, dtype, (2, 3))
    expect = np.stack(xs)
    y = world.allgather(xs[r])
    assert isinstance(y, np.ndarray) and y.shape == (P, 2, 3) and y.dtype == np.dtype(dtype)
    assert (y == expect).all()
    out = np.full((P, 6), 9, dtype=dtype)          # another shape, the same count
    assert world.allgather(xs[r], out=out) is out
    assert (out == expect.reshape(P, 6)).all()
    inplace = np.zeros((P, 2, 3), dtype=dtype)
    inplace[r] = xs[r]
    assert world.allgather(inplace[r], out=inplace) is inplace   # x = out[rank]
    assert (inplace == expect).all()
    assert (world.iallgather(xs[r]).wait() == expect).all()


def test_allgather_buffers(world):
    """Any buffer: array.array in, a new numpy array out; a scalar (0-d) gives shape (P,)."""
    x = array.array("d", [world.rank + 0.5] * 3)
    y = world.allgather(x)
    assert y.shape == (world.size, 3) and (y[:, 1] == np.arange(world.size) + 0.5).all()
    s = world.allgather(np.int32(world.rank * 5))
    assert s.shape == (world.size,) and (s == np.arange(world.size) * 5).all()




def test_dlpack(world):
    """DLPack in: no copy (out written in place), shapes taken from the tensor."""
    P, r = world.size, world.rank
    xs = inputs(world, "float32", (2, 2), seed=8)
    y = world.allgather(DLPackOnly(xs[r]))
    assert isinstance(y, np.ndarray) and y.shape == (P, 2, 2) and (y == np.stack(xs)).all()
    out = np.zeros((2, 2), np.float32)
    world.reduce_scatter_block(DLPackOnly(np.stack(xs)), out=DLPackOnly(out))
    assert (out == fold("sum", [np.stack(xs)] * P)[r]).all()


def test_allgather_bfloat16(world):
    ml = pytest.importorskip("ml_dtypes")
    x = np.arange(4).astype(ml.bfloat16) + world.rank
    y = world.allgather(x)
    assert y.dtype == x.dtype and y.shape == (world.size, 4)
    assert (y.astype(np.float32) == np.arange(4) + np.arange(world.size)[:, None]).all()


def test_allgatherv(world):
    P, r = world.size, world.rank
    counts = [j % 3 for j in range(P)]             # zeros included
    xs = [data(j, "int32", (counts[j],)) for j in range(P)]
    y = world.allgatherv(xs[r], counts)
    assert y.dtype == np.int32 and (y == np.concatenate(xs)).all()
    displs = gapped(counts)
    out = np.full(sum(counts) + P, -7, dtype=np.int32)
    world.allgatherv(xs[r], counts, out=out, displs=displs)
    assert (out == layout(counts, displs, -7, np.int32, xs, len(out))).all()
    inplace = np.full(out.shape, -7, dtype=np.int32)
    inplace[displs[r]:displs[r] + counts[r]] = xs[r]
    world.allgatherv(inplace[displs[r]:displs[r] + counts[r]], counts, out=inplace,
                     displs=displs)
    assert (inplace == out).all()
    assert (world.iallgatherv(xs[r], np.array(counts)).wait() == np.concatenate(xs)).all()


@pytest.mark.parametrize("op", ["sum", "max", "prod"])
def test_reduce_scatter_block(world, op):
    P, r = world.size, world.rank
    xs = inputs(world, "int64", (P, 3), seed=1)
    expect = fold(op, xs)[r]
    y = world.reduce_scatter_block(xs[r], op=op)
    assert y.shape == (3,) and y.dtype == np.int64 and (y == expect).all()
    flat = world.reduce_scatter_block(xs[r].reshape(-1), op=op)   # 1-D: blocks of P*3 // P
    assert flat.shape == (3,) and (flat == expect).all()
    x = xs[r].copy()
    assert world.reduce_scatter_block(x, out=x[0], op=op) is not None   # in place: out = x[0]
    assert (x[0] == expect).all()
    assert (world.ireduce_scatter_block(xs[r], op=op).wait() == expect).all()


def test_reduce_scatter_block_callable(world):
    """Not commutative: "keep the lower rank's value" gives rank 0's block r."""
    xs = inputs(world, "float32", (world.size, 2))
    y = world.reduce_scatter_block(xs[world.rank], op=lambda a, b: a)
    assert (y == xs[0][world.rank]).all()


def test_reduce_scatter(world):
    P, r = world.size, world.rank
    counts = [(j + 1) % 3 for j in range(P)]
    xs = inputs(world, "float32", (sum(counts),), seed=2)
    total = fold("sum", xs)
    lo = sum(counts[:r])
    expect = total[lo:lo + counts[r]]
    y = world.reduce_scatter(xs[r], counts)
    assert y.shape == (counts[r],) and (y == expect).all()
    x = xs[r].copy()
    world.reduce_scatter(x, counts, out=x[:counts[r]])             # in place
    assert (x[:counts[r]] == expect).all()
    assert (world.ireduce_scatter(xs[r], counts, op="max").wait() ==
            fold("max", xs)[lo:lo + counts[r]]).all()


def test_alltoall(world):
    P, r = world.size, world.rank
    xs = inputs(world, "int16", (P, 2), seed=3)
    expect = np.stack([xs[j][r] for j in range(P)])
    y = world.alltoall(xs[r])
    assert y.shape == (P, 2) and (y == expect).all()
    x = xs[r].copy()
    assert world.alltoall(x, out=x) is x and (x == expect).all()    # in place
    assert (world.ialltoall(xs[r].reshape(-1)).wait() == expect.reshape(-1)).all()


def test_alltoallv(world):
    P, r = world.size, world.rank

    def c(i, j):                  # elements rank i sends to rank j
        return (i + 2 * j) % 3

    def block(i, j):              # those elements, distinct per (i, j)
        return np.arange(c(i, j), dtype=np.float64) + 100 * i + 10 * j

    x = np.concatenate([block(r, j) for j in range(P)])
    sendcounts = [c(r, j) for j in range(P)]
    recvcounts = [c(j, r) for j in range(P)]
    expect = np.concatenate([block(j, r) for j in range(P)])
    y = world.alltoallv(x, sendcounts, recvcounts)
    assert y.dtype == np.float64 and (y == expect).all()
    sdispls, rdispls = gapped(sendcounts), gapped(recvcounts)
    xg = layout(sendcounts, sdispls, -1.0, np.float64, [block(r, j) for j in range(P)])
    out = np.full(sum(recvcounts) + P, -5.0)
    world.alltoallv(xg, sendcounts, recvcounts, out=out, sdispls=sdispls, rdispls=rdispls)
    assert (out == layout(recvcounts, rdispls, -5.0, np.float64,
                          [block(j, r) for j in range(P)], len(out))).all()
    assert (world.ialltoallv(x, sendcounts, recvcounts).wait() == expect).all()


def test_alltoallv_in_place(world):
    """In place (out = x) the receive arrays describe both directions (symmetric counts)."""
    P, r = world.size, world.rank
    counts = [(r + j) % 3 for j in range(P)]
    x = np.concatenate([np.full(counts[j], 10 * r + j, dtype=np.int32) for j in range(P)])
    world.alltoallv(x, None, counts, out=x)
    assert (x == np.concatenate([np.full(counts[j], 10 * j + r, np.int32)
                                 for j in range(P)])).all()


def test_gather(world):
    P, r = world.size, world.rank
    xs = inputs(world, "uint16", (3,), seed=4)
    for root in range(P):
        y = world.gather(xs[r], root=root)
        if r == root:
            assert y.shape == (P, 3) and (y == np.stack(xs)).all()
        else:
            assert y is None
    out = np.zeros((P, 3), dtype=np.uint16)
    out[r] = xs[r]
    got = world.gather(out[r], root=0, out=out)    # in place at the root (x = out[root])
    if r == 0:
        assert got is out and (out == np.stack(xs)).all()
    req = world.igather(xs[r], root=P - 1)
    got = req.wait()
    assert (got is None) == (r != P - 1)


def test_gatherv(world):
    P, r = world.size, world.rank
    counts = [(j + 2) % 3 for j in range(P)]
    xs = [data(j, "int8", (counts[j],)) for j in range(P)]
    for root in range(P):
        y = world.gatherv(xs[r], counts if r == root else None, root=root)
        if r == root:
            assert (y == np.concatenate(xs)).all()
        else:
            assert y is None
    displs = gapped(counts)
    out = np.full(sum(counts) + P, 3, dtype=np.int8)
    world.gatherv(xs[r], counts, root=0, out=out, displs=displs)
    if r == 0:
        assert (out == layout(counts, displs, 3, np.int8, xs, len(out))).all()
    got = world.igatherv(xs[r], counts, root=0).wait()
    assert (got is None) == (r != 0)


def test_scatter(world):
    P, r = world.size, world.rank
    for root in range(P):
        x = data(root, "float32", (P, 2, 2), seed=5)
        y = world.scatter(x if r == root else None, root=root,
                          out=None if r == root else np.empty((2, 2), np.float32))
        assert y.shape == (2, 2) and (y == x[r]).all()
    x = data(0, "float32", (P, 2, 2), seed=5)
    like = world.scatter(x, root=0)        # off the root x only gives the shape and dtype
    assert like.shape == (2, 2) and (like == x[r]).all()
    if r == 0:
        mine = x.copy()
        assert world.scatter(mine, root=0, out=mine[0]) is not None   # in place at the root
        assert (mine == x).all()
    else:
        world.scatter(None, root=0, out=np.empty(4, np.float32))
    assert (world.iscatter(x.reshape(-1), root=0).wait() == x[r].reshape(-1)).all()


def test_scatterv(world):
    P, r = world.size, world.rank
    counts = [j % 3 + 1 for j in range(P)]
    displs = gapped(counts)
    blocks = [data(j, "int32", (counts[j],), seed=6) for j in range(P)]
    x = layout(counts, displs, -1, np.int32, blocks)
    y = world.scatterv(x, counts, root=0, displs=displs)          # counts and x everywhere
    assert y.shape == (counts[r],) and (y == blocks[r]).all()
    if r == P - 1:
        y = world.scatterv(x, counts, root=P - 1, displs=displs)
    else:
        y = world.scatterv(None, root=P - 1, out=np.empty(counts[r], np.int32))
    assert (y == blocks[r]).all()
    assert (world.iscatterv(np.concatenate(blocks), counts, root=0).wait() == blocks[r]).all()


@pytest.mark.parametrize("op", ["sum", "max"])
def test_scan_exscan(world, op):
    P, r = world.size, world.rank
    xs = inputs(world, "int32", (4,), seed=7)
    y = world.scan(xs[r], op=op)
    assert y.shape == (4,) and (y == fold(op, xs[:r + 1])).all()
    e = world.exscan(xs[r], op=op)
    if r == 0:
        assert e is None                      # undefined in MPI: None here
    else:
        assert (e == fold(op, xs[:r])).all()
    out = np.full(4, 77, dtype=np.int32)
    got = world.exscan(xs[r], out=out, op=op)
    if r == 0:
        assert got is None and (out == 77).all()   # an out given is left untouched
    else:
        assert got is out and (out == fold(op, xs[:r])).all()
    x = xs[r].copy()
    assert world.scan(x, out=x, op=op) is x and (x == fold(op, xs[:r + 1])).all()
    assert (world.iscan(xs[r], op=op).wait() == fold(op, xs[:r + 1])).all()
    e = world.iexscan(xs[r], op=op).wait()
    assert (e is None) if r == 0 else (e == fold(op, xs[:r])).all()


def test_scan_callable(world):
    """Not commutative: "keep the higher rank's value" gives every rank its own input."""
    xs = inputs(world, "float64", (3,))
    assert (world.scan(xs[world.rank], op=lambda a, b: b) == xs[world.rank]).all()
    assert (world.scan(xs[world.rank], op=lambda a, b: a) == xs[0]).all()


def test_colls_errors(world):
    """Bad arguments raise CollieError naming what is wrong, on every rank alike, before
    anything starts (the next collective still works)."""
    P, r = world.size, world.rank
    E = collie.CollieError
    with pytest.raises(E, match="counts has %d entries for a team of %d" % (P + 1, P)):
        world.allgatherv(np.ones(1), [1] * (P + 1))
    with pytest.raises(E, match=r"x has 2 elements but counts\[%d\] is 1" % r):
        world.allgatherv(np.ones(2), [1] * P)
    with pytest.raises(E, match="counts\\[0\\] is -1 \\(negative\\)"):
        world.reduce_scatter(np.ones(3), [-1] + [1] * (P - 1))
    if P > 1:
        with pytest.raises(E, match="not a multiple of the team's %d ranks" % P):
            world.alltoall(np.ones(P * 2 + 1))
    with pytest.raises(E, match="Fortran order"):
        world.allgather(np.ones((2, 3), order="F"))
    with pytest.raises(E, match="out is 5 x float64; expected %d x float64" % (3 * P)):
        world.allgather(np.ones(3), out=np.empty(5))
    with pytest.raises(E, match="out is %d x float32; expected %d x float64" % (3 * P, 3 * P)):
        world.allgather(np.ones(3), out=np.empty(3 * P, np.float32))
    buf = np.zeros(4 * P)
    with pytest.raises(E, match="overlap, but not as in place"):
        world.allgather(buf[1:4], out=buf[:3 * P])
    with pytest.raises(E, match="out of range"):
        world.gather(np.ones(2), root=P)
    if P > 1:
        with pytest.raises(E, match="rank %d is not the root: give out" % r) if r else \
                pytest.raises(E, match="not a multiple"):
            world.scatter(None if r else np.ones(P + 1), root=0)
    y = world.allgather(np.full(2, r))
    assert (y[:, 0] == np.arange(P)).all()
