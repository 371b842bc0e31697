"""dist.init_process_group("collie") with no init_method (torch's default env://) under
collie-run, which sets torchrun's RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT: the
default group runs on collie and an all_reduce gives the sum over the ranks."""
import torch
import torch.distributed as dist

import collie
import collie.torch  # noqa: F401  (registers the backend)

dist.init_process_group("collie")
rank, size = dist.get_rank(), dist.get_world_size()
team = collie.world()
assert (rank, size) == (team.rank, team.size), (rank, size, team.rank, team.size)
assert dist.get_backend() == "collie", dist.get_backend()
t = torch.arange(5, dtype=torch.float64) + rank
dist.all_reduce(t)
want = [size * i + size * (size - 1) / 2 for i in range(5)]
assert t.tolist() == want, (t.tolist(), want)
dist.destroy_process_group()
print("rank %d of %d: init_process_group(\"collie\") with env:// passed" % (rank, size))
