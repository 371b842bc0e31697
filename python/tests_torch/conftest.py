"""Shared by the tests of the torch.distributed backend (collie.torch).  Every rank of a
collie-run job runs the same tests in the same order; a test skips only for reasons that
are the same on every rank (team size, the PyTorch version).

Each rank's input is a deterministic function of (rank, dtype, shape, seed), so every rank
computes the expected result of a collective from all ranks' inputs by itself (torch ops,
in the tensor's own dtype), independently of collie."""
import functools
import os

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

import collie  # noqa: E402
import collie.torch  # noqa: E402,F401  (registers the backend)

INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
OPS = ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG"]


@pytest.fixture(scope="session")
def pg():
    if not dist.is_initialized():
        collie.torch.init()
    yield dist.group.WORLD


def size():
    return int(os.environ.get("COLLIE_SIZE", "1"))


def data(rank, dtype, shape=(3, 5), seed=0, small=False):
    """Rank's input: small integers, exact in every dtype and in every sum and product of
    up to 4 of them (small=True: 1..3, for products)."""
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    if small:
        v = (i + rank + seed) % 3 + 1
    else:
        v = (i * 7 + rank * 3 + seed) % 11
        if dtype.is_floating_point or dtype.is_signed:
            v = v - 5
    return v.to(dtype).reshape(shape)


REFS = {
    "SUM": torch.add, "PRODUCT": torch.mul, "MIN": torch.minimum, "MAX": torch.maximum,
    "BAND": torch.bitwise_and, "BOR": torch.bitwise_or, "BXOR": torch.bitwise_xor,
}


def applicable(op, dtype):
    if op.startswith("B"):
        return not dtype.is_floating_point
    if op == "AVG":
        return dtype.is_floating_point
    return True


def reference(op, inputs):
    """The reduction of inputs (rank order) with torch op name `op`, in their dtype."""
    if op == "AVG":   # the exact sum (small integers), divided in the tensors' dtype
        return reference("SUM", inputs) / len(inputs)
    return functools.reduce(lambda a, b: REFS[op](a, b).to(a.dtype), inputs)


def inputs(op, dtype, shape=(3, 5), seed=0):
    return [data(r, dtype, shape, seed, small=op == "PRODUCT") for r in range(size())]
