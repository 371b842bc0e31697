"""collie from Python: collectives (allreduce, reduce, bcast, barrier, allgather(v),
reduce_scatter(_block), alltoall(v), gather(v), scatter(v), scan, exscan) on numpy arrays,
any object with the buffer protocol, or a CPU tensor with ``__dlpack__`` — without copies.

    import collie, numpy as np
    world = collie.init()          # the ranks collie-run started; a team of one otherwise
    y = world.allreduce(x)         # new array; op="sum" (or "max", "min", "prod", ... or f(a, b))
    world.allreduce(x, out=x)      # in place
    world.bcast(x, root=0)         # in place
    r = world.reduce(x, root=0)    # the array at the root, None elsewhere
    req = world.iallreduce(x, out=y); req.test(timeout_ms=0); req.wait()
    rows = world.allgather(x)      # shape (size, *x.shape); gather(x, root) at the root only
    mine = world.reduce_scatter_block(rows)   # block `rank` of the sum (rows[j]: block j)
    world.alltoall(x, out=y); world.scatter(x, root=0); world.scan(x); world.exscan(x)
    world.allgatherv(x, counts), reduce_scatter(x, counts), alltoallv(x, sc, rc), gatherv,
    scatterv: counts (and displs) in elements, one per rank; an i… form of each collective
    sub = world.split(color, key)  # a new Team (None for a negative color); sub.free()
    with world.dup() as d: ...     # freed at the end of the block
    collie.finalize()

Errors raise collie.CollieError (message and status of the C library).
With PyTorch installed, `import collie.torch` registers the torch.distributed backend
"collie" (see collie/torch/__init__.py).
"""
from ._errors import CollieError, status_name
from ._helpers import Op, install as _install_helpers
from . import _collie, _library

__all__ = ["init", "finalize", "world", "CollieError", "Op", "Team", "Request", "version",
           "UNDEFINED"]

UNDEFINED = -1   # a color that joins no team: Team.split(UNDEFINED) returns None

Team = _collie.Team
Request = _collie.Request
_install_helpers(_collie)


def init(library=None):
    """Joins the world and returns it as a Team.

    Under collie-run: the ranks it started (shared memory).  Under mpirun/mpiexec with
    mpi4py installed: MPI_COMM_WORLD, through libcollie_mpi for the MPI mpi4py uses.
    Otherwise a team of one.  ``library`` forces the path of the collie library to load.
    """
    path = library or _library.choose()
    _library.bind_mpi(path)
    _collie._load(path)
    return _collie._init()


def finalize():
    """Leaves the world (collie_finalize); every Team and Request becomes unusable."""
    _collie._finalize()


def world():
    """The world Team after init(), else None."""
    return _collie._world()


def version():
    """The version of the loaded collie library (None before init())."""
    return _collie._version()
