"""The contract of issue 17, one test per line, each checked against a reference computed
locally from every rank's (known) input."""
import functools

import numpy as np
import pytest

import collie
from conftest import FLOATS, INTS, data, expected_size

REFS = {
    "sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
    "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor,
}


def reference(world, op, dtype, shape=(3, 5), seed=0):
    xs = [data(r, dtype, shape, seed) for r in range(world.size)]
    with np.errstate(over="ignore"):
        return functools.reduce(lambda a, b: REFS[op](a, b).astype(dtype), xs)


def test_init_rank_size(world):
    assert isinstance(world, collie.Team)
    assert world.size == expected_size()
    assert 0 <= world.rank < world.size
    onehot = np.zeros(world.size, dtype=np.int32)
    onehot[world.rank] = 1
    assert (world.allreduce(onehot) == 1).all()   # every rank number taken exactly once


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_allreduce_new_array(world, dtype):
    x = data(world.rank, dtype)
    before = x.copy()
    y = world.allreduce(x)
    assert isinstance(y, np.ndarray) and y is not x
    assert y.dtype == x.dtype and y.shape == x.shape
    assert (x == before).all()
    assert (y == reference(world, "sum", dtype)).all()


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod", "band", "bor", "bxor"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float64"])
def test_allreduce_in_place(world, op, dtype):
    if op.startswith("b") and np.dtype(dtype).kind == "f":
        return
    x = data(world.rank, dtype, shape=(7,))
    r = world.allreduce(x, out=x, op=op)
    assert r is x
    assert (x == reference(world, op, dtype, shape=(7,))).all()


def test_allreduce_logical(world):
    x = (np.arange(6) + world.rank) % 3 == 0
    xi = x.astype(np.int32)
    xs = [((np.arange(6) + r) % 3 == 0) for r in range(world.size)]
    assert (world.allreduce(xi, op="land") == np.logical_and.reduce(xs).astype(np.int32)).all()
    assert (world.allreduce(xi, op="lor") == np.logical_or.reduce(xs).astype(np.int32)).all()


def test_allreduce_python_callable(world):
    x = data(world.rank, "float32", shape=(5,))
    y = world.allreduce(x, op=lambda a, b: np.maximum(a, b))
    assert (y == reference(world, "max", "float32", shape=(5,))).all()
    # Not commutative: "keep the lower rank's value" gives rank 0's input everywhere.
    first = world.allreduce(x, op=lambda a, b: a)
    assert (first == data(0, "float32", shape=(5,))).all()
    last = world.allreduce(x, op=lambda a, b: b)
    assert (last == data(world.size - 1, "float32", shape=(5,))).all()
    z = world.allreduce(x, op=collie.Op(np.add, commutative=True))
    assert (z == reference(world, "sum", "float32", shape=(5,))).all()


def test_allreduce_callable_exception(world):
    def bad(a, b):
        raise ValueError("op failed on purpose")
    x = np.ones(3)
    if world.size == 1:
        assert (world.allreduce(x, op=bad) == 1).all()   # nothing to combine: not called
        return
    with pytest.raises(ValueError, match="on purpose"):
        world.allreduce(x, op=bad)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_bcast_in_place(world, dtype):
    for root in range(world.size):
        x = data(root, dtype) if world.rank == root else np.zeros((3, 5), dtype=dtype)
        r = world.bcast(x, root=root)
        assert r is x
        assert (x == data(root, dtype)).all()


def test_bcast_default_root(world):
    x = np.full(4, 9.0) if world.rank == 0 else np.zeros(4)
    world.bcast(x)
    assert (x == 9).all()


def test_reduce(world):
    for root in range(world.size):
        x = data(world.rank, "int16")
        r = world.reduce(x, root=root)
        if world.rank == root:
            assert isinstance(r, np.ndarray) and r.dtype == np.int16 and r.shape == x.shape
            assert (r == reference(world, "sum", "int16")).all()
        else:
            assert r is None
    r = world.reduce(data(world.rank, "float64"), op="max")   # root=0 by default
    assert (r is None) == (world.rank != 0)
    if world.rank == 0:
        assert (r == reference(world, "max", "float64")).all()


def test_iallreduce(world):
    x = data(world.rank, "float64", shape=(1000,))
    y = np.empty_like(x)
    req = world.iallreduce(x, out=y)
    assert isinstance(req, collie.Request)
    polls = 0
    while True:
        done = req.test(timeout_ms=0)
        assert isinstance(done, bool)
        if done:
            break
        polls += 1
        assert polls < 10_000_000
    assert req.test(timeout_ms=0) is True
    assert req.wait() is y
    assert (y == reference(world, "sum", "float64", shape=(1000,))).all()
    req2 = world.iallreduce(x, op="min")
    z = req2.wait()
    assert (z == reference(world, "min", "float64", shape=(1000,))).all()


def test_ireduce_ibcast_ibarrier(world):
    x = data(world.rank, "int32")
    r1 = world.ireduce(x, root=world.size - 1)
    b = data(0, "int32") if world.rank == 0 else np.zeros((3, 5), np.int32)
    r2 = world.ibcast(b, root=0)
    r3 = world.ibarrier()
    got = r1.wait()
    assert r2.wait() is b and r3.wait() is None
    if world.rank == world.size - 1:
        assert (got == reference(world, "sum", "int32")).all()
    else:
        assert got is None
    assert (b == data(0, "int32")).all()


def test_barrier(world, tmp_path_factory):
    import os
    job = os.environ.get("COLLIE_JOB", "single")
    d = os.path.join("/tmp", "collie-pytest-barrier-" + job)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, str(world.rank)), "w").close()
    assert world.barrier() is None
    assert sorted(os.listdir(d)) == sorted(str(r) for r in range(world.size))
    world.barrier()   # nobody removes the directory before everyone has looked
    if world.rank == 0:
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        os.rmdir(d)


def test_split(world):
    """sub = world.split(color, key): the ranks of one color, ordered by key (here reversed),
    run collectives among themselves (more in test_teams.py)."""
    sub = world.split(world.rank % 2, -world.rank)
    members = sorted((r for r in range(world.size) if r % 2 == world.rank % 2), reverse=True)
    assert isinstance(sub, collie.Team)
    assert (sub.rank, sub.size) == (members.index(world.rank), len(members))
    x = data(world.rank, "int64")
    assert (sub.allreduce(x) == sum(data(r, "int64") for r in members)).all()
    sub.free()


def test_threads(world):
    """A second thread polls a split-phase request while the main thread runs blocking
    collectives: the library is entered by one thread at a time, results stay right."""
    import threading
    x = data(world.rank, "float64", shape=(5000,))
    req = world.iallreduce(x)
    polled = []

    def poll():
        while not req.test(timeout_ms=1):
            polled.append(1)
    th = threading.Thread(target=poll)
    th.start()
    y = world.allreduce(x, op="max")
    world.barrier()
    th.join()
    assert (req.wait() == reference(world, "sum", "float64", shape=(5000,))).all()
    assert (y == reference(world, "max", "float64", shape=(5000,))).all()


def test_collective_inside_op_refused(world):
    def reenter(a, b):
        world.barrier()
        return a + b
    if world.size == 1:
        return   # the operation is never called in a team of one
    with pytest.raises(collie.CollieError, match="inside a user-defined operation"):
        world.allreduce(np.ones(3), op=reenter)
