"""Anything with the buffer protocol or __dlpack__ works without a copy; bfloat16 through
ml_dtypes; non-contiguous data is refused."""
import array

import numpy as np
import pytest

import collie
from conftest import DLPackOnly, data




def test_bytearray_array_memoryview_in_place(world):
    P = world.size
    ba = bytearray([1, 2, 3])
    world.allreduce(ba, out=ba)
    assert list(ba) == [P, 2 * P, 3 * P]
    ar = array.array("d", [0.5, world.rank])
    world.allreduce(ar, out=ar)
    assert list(ar) == [0.5 * P, sum(range(P))]
    base = np.arange(4, dtype=np.int64)
    mv = memoryview(base)
    world.allreduce(mv, out=mv)
    assert (base == np.arange(4) * P).all()   # wrote into the numpy array: no copy


def test_dlpack_no_copy(world):
    a = data(world.rank, "float32", shape=(2, 6))
    t = DLPackOnly(a)
    y = world.allreduce(t)
    ref = sum(data(r, "float32", shape=(2, 6)) for r in range(world.size))
    assert isinstance(y, np.ndarray) and y.shape == (2, 6) and y.dtype == np.float32
    assert (y == ref).all()
    world.allreduce(t, out=t)
    assert (a == ref).all()                  # in place in the producer's memory
    b = np.zeros(5, np.int16) if world.rank else np.arange(5, dtype=np.int16)
    world.bcast(DLPackOnly(b), root=0)
    assert (b == np.arange(5)).all()


def test_bfloat16(world):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = data(world.rank, "float32", shape=(9,)).astype(ml_dtypes.bfloat16)
    y = world.allreduce(x)
    assert y.dtype == x.dtype and y.shape == x.shape
    ref = sum(data(r, "float32", shape=(9,)) for r in range(world.size))
    assert (y.astype(np.float32) == ref).all()
    world.allreduce(x, out=x, op="max")
    refmax = np.max([data(r, "float32", shape=(9,)) for r in range(world.size)], axis=0)
    assert (x.astype(np.float32) == refmax).all()


def test_bfloat16_scalar(world):
    """A bfloat16 numpy scalar works as x, like other numpy scalars (it was refused: numpy
    exports it as a buffer without format), and is refused where it would be written."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    s = np.array(world.rank + 1, ml_dtypes.bfloat16)[()]
    y = world.allreduce(s)
    assert y.dtype == s.dtype and y.shape == () and float(y) == sum(range(1, world.size + 1))
    g = world.allgather(s)
    assert g.dtype == s.dtype and g.astype(np.float32).tolist() == list(range(1, world.size + 1))
    with pytest.raises(collie.CollieError, match="not a buffer|read-only|writable"):
        world.bcast(s)


def test_fortran_order(world):
    x = np.asfortranarray(data(world.rank, "float64", shape=(4, 3)))
    y = world.allreduce(x)
    assert y.flags.f_contiguous
    assert (y == sum(data(r, "float64", shape=(4, 3)) for r in range(world.size))).all()


def test_non_contiguous_refused(world):
    x = np.zeros((4, 4))[:, 1]
    with pytest.raises(collie.CollieError, match="not contiguous") as e:
        world.allreduce(x)
    assert e.value.status == -1
    with pytest.raises(collie.CollieError, match="not contiguous"):
        world.allreduce(DLPackOnly(np.zeros((4, 4))[:, 1]))


def test_empty_with_any_strides(world):
    """An empty array is contiguous whatever its strides, as numpy says, also through DLPack
    (torch's own empty tensors with odd strides, which were refused: tests_torch)."""
    e = np.zeros((3, 4))[:, :0]
    for x in (e, DLPackOnly(e), DLPackOnly(np.zeros(6)[::2][:0])):
        y = world.allreduce(x)
        assert y.size == 0
    assert world.allgather(DLPackOnly(e)).shape == (world.size, 3, 0)
