"""collie.init() in an MPI job: the world is MPI_COMM_WORLD (libcollie_mpi of the MPI in
use); split and dup through the MPI communicator.  With --mpi4py the script imports mpi4py first and checks against it."""
import sys

import numpy as np

use_mpi4py = "--mpi4py" in sys.argv
if use_mpi4py:
    try:
        from mpi4py import MPI
    except ImportError:
        print("SKIP: mpi4py is not installed (Debian: python3-mpi4py)")
        sys.exit(77)
import collie

world = collie.init()
flavour = sys.argv[1]
lib = collie._collie._library()
assert "/%s/libcollie_mpi.so" % flavour in lib, lib
x = np.arange(10, dtype=np.float64) + world.rank
y = world.allreduce(x)
P = world.size
assert (y == np.arange(10) * P + P * (P - 1) // 2).all(), y
if use_mpi4py:
    comm = MPI.COMM_WORLD
    assert (world.rank, world.size) == (comm.Get_rank(), comm.Get_size())
    ref = np.empty_like(x)
    comm.Allreduce(x, ref)
    assert (y == ref).all()
# The collectives of issue 16 on the MPI world (libcollie_mpi's transport).
g = world.allgather(np.array([world.rank * 3, 1], dtype=np.int32))
assert g.shape == (P, 2) and (g[:, 0] == np.arange(P) * 3).all(), g
s = world.scan(np.full(2, world.rank + 1, dtype=np.int64))
assert (s == (world.rank + 1) * (world.rank + 2) // 2).all(), s
a = world.alltoall(np.arange(P, dtype=np.float32) + 10 * world.rank)
assert (a == np.arange(P) * 10 + world.rank).all(), a
b = np.full(3, 5.0) if world.rank == 1 % P else np.zeros(3)
world.bcast(b, root=1 % P)
assert (b == 5).all()
# A sub-team through PMPI_Comm_split (reversed order), and a dup in a with-block.
with world.split(world.rank % 2, -world.rank) as half:
    members = sorted((r for r in range(P) if r % 2 == world.rank % 2), reverse=True)
    assert (half.rank, half.size) == (members.index(world.rank), len(members))
    assert half.allreduce(np.array([world.rank], dtype=np.int64))[0] == sum(members)
    if use_mpi4py:
        sub = comm.Split(world.rank % 2, -world.rank)
        assert (half.rank, half.size) == (sub.Get_rank(), sub.Get_size())
        sub.Free()
with world.dup() as d:
    assert (d.allreduce(np.ones(2)) == P).all()
collie.finalize()
print("rank %d of %d: MPI world through %s: OK" % (world.rank, P, lib))
