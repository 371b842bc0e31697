"""collie.finalize() (runs last: file order): leaves the world; the team is unusable after."""
import numpy as np
import pytest

import collie


def test_finalize(world):
    req = world.iallreduce(np.ones(4))
    with pytest.raises(collie.CollieError, match="still in progress"):
        collie.finalize()
    assert (req.wait() == world.size).all()
    assert collie.finalize() is None
    assert collie.world() is None
    with pytest.raises(collie.CollieError, match="finalize"):
        world.allreduce(np.ones(3))
    with pytest.raises(collie.CollieError, match="not called|finalize"):
        collie.finalize()
