"""The collie torch backend under mpirun: collie.init() joins MPI_COMM_WORLD (libcollie_mpi
of the MPI in use) and init_method "collie://" takes torch's rank and size from it; an
allreduce, a broadcast and a DDP step are checked against references computed locally."""
import sys

import torch
import torch.distributed as dist

import collie
import collie.torch

flavour = sys.argv[1]
collie.torch.init()
lib = collie._collie._library()
assert "/%s/libcollie_mpi.so" % flavour in lib, lib
rank, P = dist.get_rank(), dist.get_world_size()
assert (rank, P) == (collie.world().rank, collie.world().size)
x = torch.arange(10, dtype=torch.float32) + rank
dist.all_reduce(x)
assert torch.equal(x, torch.arange(10, dtype=torch.float32) * P + P * (P - 1) // 2), x
b = torch.full((3,), 5, dtype=torch.int64) if rank == 1 % P else torch.zeros(3, dtype=torch.int64)
dist.broadcast(b, src=1 % P)
assert (b == 5).all()
torch.manual_seed(rank)                     # different initial weights: DDP broadcasts rank 0's
model = torch.nn.Linear(4, 2)
ddp = torch.nn.parallel.DistributedDataParallel(model)
ddp(torch.ones(1, 4) * (rank + 1)).sum().backward()
torch.manual_seed(0)
ref = torch.nn.Linear(4, 2)
assert torch.equal(model.weight.detach(), ref.weight.detach())
# d(sum of outputs)/dW = the input row for each output; averaged over ranks: mean(rank + 1)
assert torch.allclose(model.weight.grad, torch.full((2, 4), (P + 1) / 2.0)), model.weight.grad
dist.destroy_process_group()
print("rank %d of %d: torch backend on the MPI world through %s: OK" % (rank, P, lib))
