"""Bad arguments raise collie.CollieError naming what was wrong (the C library's message and
status where the library found it).  Every rank makes the same bad call, so the team stays
healthy for the tests that follow."""
import numpy as np
import pytest

import collie


def raises(status, match):
    return pytest.raises(collie.CollieError, match=match)


def test_bad_root_from_library(world):
    with pytest.raises(collie.CollieError, match="root 99 is out of range") as e:
        world.reduce(np.ones(3), root=99)
    assert e.value.status == -1 and e.value.status_name == "COLLIE_ERR_ARG"
    assert "rank %d" % world.rank in str(e.value)   # the library names the rank
    with pytest.raises(collie.CollieError, match="out of range"):
        world.bcast(np.ones(3), root=world.size)


def test_bad_buffers(world):
    with pytest.raises(collie.CollieError, match="element type '\\?'"):
        world.allreduce(np.zeros(3, dtype=bool))
    with pytest.raises(collie.CollieError, match="complex|element type"):
        world.allreduce(np.zeros(3, dtype=complex))
    with pytest.raises(collie.CollieError, match="not a buffer"):
        world.allreduce("text")
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(collie.CollieError, match="read-only"):
        world.allreduce(np.ones(3), out=ro)
    with pytest.raises(collie.CollieError, match="read-only"):
        world.bcast(ro)
    with pytest.raises(collie.CollieError, match="element type and count"):
        world.allreduce(np.ones(3), out=np.zeros(4))
    with pytest.raises(collie.CollieError, match="element type and count"):
        world.allreduce(np.ones(3), out=np.zeros(3, np.float32))
    a = np.zeros(8)
    with pytest.raises(collie.CollieError, match="overlap"):
        world.allreduce(a[:4], out=a[2:6])


def test_bad_op(world):
    with pytest.raises(collie.CollieError, match="unknown op 'mean'"):
        world.allreduce(np.ones(3), op="mean")
    with pytest.raises(collie.CollieError, match="op must be"):
        world.allreduce(np.ones(3), op=42)
    with pytest.raises(collie.CollieError, match="not defined|unsupported|bxor") as e:
        world.allreduce(np.ones(3), op="bxor")   # bitwise op on floats: the library refuses
    assert e.value.status in (-1, -5)


def test_bad_arguments(world):
    with pytest.raises(TypeError, match="unexpected keyword"):
        world.allreduce(np.ones(3), root=0)
    with pytest.raises(TypeError, match="missing required"):
        world.allreduce()
    with pytest.raises(collie.CollieError, match="root must be an int"):
        world.bcast(np.ones(3), root="zero")
    with pytest.raises(collie.CollieError, match="timeout_ms"):
        world.iallreduce(np.ones(3)).test(timeout_ms=-5)


def test_init_twice(world):
    with pytest.raises(collie.CollieError, match="already initialised"):
        collie.init()
