"""Shared by the collie Python tests.  Every rank of a collie-run job runs the same tests in
the same order (collectives must match), so a test may only skip for reasons that are the
same on every rank (team size, an optional package)."""
import os

import numpy as np
import pytest

import collie

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]


@pytest.fixture(scope="session")
def world():
    w = collie.world() or collie.init()
    yield w


def data(rank, dtype, shape=(3, 5), seed=0):
    """Rank's input: small integers (exact in every dtype, sums included), negative ones
    for signed types."""
    n = int(np.prod(shape))
    v = (np.arange(n) * 7 + rank * 3 + seed) % 11
    dt = np.dtype(dtype)
    if dt.kind in "if":
        v = v - 5
    return v.astype(dt).reshape(shape)


def expected_size():
    return int(os.environ.get("COLLIE_SIZE", "1"))


class DLPackOnly:
    """An object that offers its array through __dlpack__ only (as a CPU torch.Tensor does)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()
