"""collie as a torch.distributed backend (CPU tensors).

    import torch.distributed as dist
    import collie.torch                     # registers backend "collie" and collie://
    dist.init_process_group("collie", init_method="collie://")   # or collie.torch.init()
    dist.all_reduce(t)                      # on collie; async_op=True returns a CollieWork
    model = torch.nn.parallel.DistributedDataParallel(model)

Run with `python -m collie.run -n 4 train.py` (collie-run's ranks) or under mpirun
(MPI_COMM_WORLD through libcollie_mpi): the rank and size come from collie.init(), so no
MASTER_ADDR/MASTER_PORT is needed with init_method "collie://" (its store is a HashStore
local to each process: collie's collectives do not use a store).  With torch's own
rendezvous (env://, tcp://, file://) the backend checks that torch's rank and size are
collie's; collie-run sets torchrun's RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, so a
plain dist.init_process_group("collie") (env://) works under it.  Only the whole world is a group: new_group() of a subset raises CollieError.
"""
import urllib.parse

import torch.distributed as dist
from torch.distributed.rendezvous import register_rendezvous_handler

import collie

from .._errors import CollieError
from ._backend import CollieProcessGroup
from ._work import CollieWork

__all__ = ["init", "CollieProcessGroup", "CollieWork", "BACKEND"]

BACKEND = "collie"


def _world():
    return collie.world() or collie.init()


def _check(what, torch_rank, torch_size, team):
    if (torch_rank, torch_size) != (team.rank, team.size):
        raise CollieError("collie backend: %s gives rank %d of %d but collie's world is rank "
                          "%d of %d (start the program with collie-run / python -m "
                          "collie.run, or mpirun, and let the backend take rank and size "
                          "from collie: init_method=\"collie://\")"
                          % (what, torch_rank, torch_size, team.rank, team.size), -1)


def _create(options, pg_options=None):
    """Backend.register_backend's creator (extended API): the group's process group."""
    team = _world()
    ranks = list(getattr(options, "global_ranks_in_group", None) or [])
    if ranks and ranks != list(range(team.size)):
        raise CollieError("collie backend: a group of ranks %s: only the whole world (%d "
                          "ranks) is supported: torch creates a group's backend on its "
                          "members only, while collie's Team.split needs every rank of the "
                          "parent; use new_group(ranks, backend=\"gloo\") for sub-groups"
                          % (ranks, team.size), -5)
    _check("torch.distributed", options.group_rank, options.group_size, team)
    return CollieProcessGroup(team)


def _rendezvous_collie(url, timeout=None, **kwargs):
    """collie://: rank and size from collie's world; a process-local store."""
    team = _world()
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))
    rank = int(query.get("rank", team.rank))
    size = int(query.get("world_size", team.size))
    if rank >= 0 and size > 0:
        _check("init_process_group(rank=..., world_size=...)", rank, size, team)
    store = dist.HashStore()
    yield store, team.rank, team.size
    raise RuntimeError("collie:// rendezvous: it cannot be restarted")


def init(**kwargs):
    """dist.init_process_group("collie", init_method="collie://", **kwargs); returns the
    default process group."""
    if "store" not in kwargs:
        kwargs.setdefault("init_method", "collie://")
    dist.init_process_group(BACKEND, **kwargs)
    return dist.group.WORLD


def _register():
    if not hasattr(dist.Backend, BACKEND.upper()):
        dist.Backend.register_backend(BACKEND, _create, extended_api=True, devices=["cpu"])
    try:
        register_rendezvous_handler("collie", _rendezvous_collie)
    except RuntimeError:
        pass   # registered by an earlier import of this module (importlib.reload)


_register()
