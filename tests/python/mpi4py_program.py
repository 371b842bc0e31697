"""An unmodified mpi4py program (Allreduce, Reduce, Bcast, Barrier on numpy buffers), every
result checked against a closed form.  tests/python runs it with and without
LD_PRELOAD=libcollie_mpi.so (mpi4py_preload.sh); prints "mpi4py program: OK" per rank."""
import sys

try:
    from mpi4py import MPI
except ImportError:
    print("SKIP: mpi4py is not installed (Debian: python3-mpi4py)")
    sys.exit(77)
import numpy as np

comm = MPI.COMM_WORLD
rank, P = comm.Get_rank(), comm.Get_size()
for n in (1, 1000, 100_000):
    x = np.arange(n, dtype=np.float64) + rank
    y = np.empty_like(x)
    comm.Allreduce(x, y, op=MPI.SUM)
    assert (y == np.arange(n) * P + P * (P - 1) // 2).all()
    z = np.empty_like(x) if rank == P - 1 else None
    comm.Reduce(x, z, op=MPI.MAX, root=P - 1)
    if rank == P - 1:
        assert (z == np.arange(n) + P - 1).all()
    b = np.arange(n, dtype=np.int32) * 3 if rank == 0 else np.zeros(n, np.int32)
    comm.Bcast(b, root=0)
    assert (b == np.arange(n) * 3).all()
    comm.Barrier()
print("rank %d: thread level %d; mpi4py program: OK" % (rank, MPI.Query_thread()))
