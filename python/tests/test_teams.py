"""Sub-teams: Team.split(color, key), Team.dup(), Team.free() and the with-block.  Every rank
knows every rank's color and key, so the members of each new team (same color, ordered by
key then rank) and the results of its collectives are computed here from the members'
known inputs."""
import numpy as np
import pytest

import collie
from conftest import data


def members_of(world, color, key):
    """The world ranks of this rank's new team, in its rank order (None: no team)."""
    mine = color(world.rank)
    if mine is None or mine < 0:
        return None
    return sorted((r for r in range(world.size) if color(r) == mine), key=lambda r: (key(r), r))


def check_team(world, sub, members, seed):
    assert (sub.rank, sub.size) == (members.index(world.rank), len(members))
    x = data(world.rank, "float64", shape=(4, 6), seed=seed)
    want = sum(data(r, "float64", shape=(4, 6), seed=seed) for r in members)
    assert (sub.allreduce(x) == want).all()
    root = len(members) - 1
    r = sub.reduce(data(world.rank, "int32", seed=seed), root=root, op="max")
    if sub.rank == root:
        assert (r == np.maximum.reduce([data(m, "int32", seed=seed) for m in members])).all()
    else:
        assert r is None
    b = np.full(5, members[0] * 10 + seed if sub.rank == 0 else -1, dtype=np.int64)
    sub.bcast(b, root=0)
    assert (b == members[0] * 10 + seed).all()
    sub.barrier()


@pytest.mark.parametrize("name,color,key", [
    ("parity", lambda r: r % 2, lambda r: r),
    ("half reversed", lambda r: r // 2, lambda r: -r),
    ("holes", lambda r: None if r % 3 == 0 else 1, lambda r: 0),
    ("negative", lambda r: -7 if r == 1 else 0, lambda r: r),
])
def test_split_rules(world, name, color, key):
    members = members_of(world, color, key)
    sub = world.split(color(world.rank), key(world.rank))
    if members is None:
        assert sub is None
    else:
        check_team(world, sub, members, seed=len(name))
        sub.free()
    world.barrier()


def test_interleaved_and_nested(world):
    """Three sub-teams live at once, used in turn with the world; a split of a sub-team."""
    par = world.split(world.rank % 2, world.rank)
    dup = world.dup()
    par_members = [r for r in range(world.size) if r % 2 == world.rank % 2]
    nested = par.split(par.rank % 2, 0)
    nested_members = par_members[par.rank % 2::2]
    everyone = list(range(world.size))
    for seed in range(3):
        check_team(world, par, par_members, seed)
        ones = world.allreduce(np.ones(3, dtype=np.int32))
        assert (ones == world.size).all()
        check_team(world, dup, everyone, seed + 10)
        check_team(world, nested, nested_members, seed + 20)
    req = par.iallreduce(np.full(4, world.rank, dtype=np.int64))
    assert (world.allreduce(np.ones(2)) == world.size).all()
    assert (req.wait() == sum(par_members)).all()
    for t in (nested, dup, par):
        t.free()


def test_callables_first_used_on_sub_teams(world):
    """A callable op is made a collie op at its first use on each rank; ranks that used
    other callables before (here: on their sub-team, even and odd ranks different ones)
    must still agree on a later call of the world that passes the same callable (it raised
    COLLIE_ERR_MISMATCH "the ops differ": the op's identity was its creation index)."""
    def even(a, b):
        return a + b

    def odd(a, b):
        return a + b

    def later(a, b):
        return np.where(a != 0, a, b)   # non-commutative: the first non-zero in rank order

    with world.split(world.rank % 2) as par:
        members = [r for r in range(world.size) if r % 2 == world.rank % 2]
        y = par.allreduce(np.full(3, world.rank + 1.0), op=even if world.rank % 2 == 0 else odd)
        assert (y == sum(members) + len(members)).all()
    x = np.array([0, world.rank, world.rank + 5], dtype=np.int64)
    total = sum(range(world.size))
    y = world.allreduce(x, op=odd)      # the odd ranks' op already, new on the even ones
    assert y.tolist() == [0, total, total + 5 * world.size]
    y = world.allreduce(x, op=later)
    assert y.tolist() == [0, 1 if world.size > 1 else 0, 5]
    y = world.allreduce(x, op=odd if world.rank % 2 else even)   # different callables
    assert y.tolist() == [0, total, total + 5 * world.size]


def test_with_block_and_free(world):
    with world.dup() as d:
        assert (d.rank, d.size) == (world.rank, world.size)
        assert (d.allreduce(np.ones(2)) == world.size).all()
    with pytest.raises(collie.CollieError, match="freed"):
        d.allreduce(np.ones(2))
    assert "freed" in repr(d)
    with pytest.raises(collie.CollieError, match="freed"):
        d.free()
    with pytest.raises(collie.CollieError, match="world team") as e:
        world.free()
    assert e.value.status_name == "COLLIE_ERR_ARG"
    assert world.split(collie.UNDEFINED) is None


def test_free_with_request_pending(world):
    d = world.dup()
    req = d.iallreduce(np.ones(1000))
    with pytest.raises(collie.CollieError, match="in progress|not freed"):
        d.free()
    assert (req.wait() == world.size).all()
    d.free()


def test_split_mismatch(world):
    """One rank dups while the others split: every rank gets COLLIE_ERR_MISMATCH."""
    if world.size == 1:
        return
    with pytest.raises(collie.CollieError, match="collie_team_(split|dup)") as e:
        if world.rank == 0:
            world.dup()
        else:
            world.split(0, world.rank)
    assert e.value.status_name == "COLLIE_ERR_MISMATCH"
    assert (world.allreduce(np.ones(2)) == world.size).all()   # the world still works


def test_bad_arguments(world):
    with pytest.raises(TypeError):
        world.split()
    with pytest.raises(OverflowError):
        world.split(2 ** 40)
    with pytest.raises(TypeError):
        world.split("red")
