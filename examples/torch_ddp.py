"""DistributedDataParallel on CPU with the collie backend, checked against gloo.

    python -m collie.run -n 4 examples/torch_ddp.py      (needs PyTorch: pip install torch)

The default process group is "collie"; its rendezvous is tcp:// on a port rank 0 picks and
sends to the others with a collie broadcast, so that a second group with backend "gloo"
can share its store.  The same model is trained from the same weights on the same data
once over each group; every rank checks that the losses of the two runs agree (to float32
rounding: the two backends may add the ranks' gradients in different orders) and prints
the time per step of each.  Exit status 1 if they do not agree.
"""
import socket
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import collie
import collie.torch  # noqa: F401  (registers backend "collie")

BATCH, D_IN, D_HID, STEPS, LR = 16, 64, 256, 30, 0.02


def free_port(world):
    """A free TCP port on this host, chosen by rank 0 and broadcast with collie."""
    port = torch.zeros(1, dtype=torch.int64)
    if world.rank == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    world.bcast(port, root=0)
    return int(port[0])


def train(group, rank, size):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(D_IN, D_HID), torch.nn.ReLU(),
                                torch.nn.Linear(D_HID, 1))
    ddp = DDP(model, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(42)
    w_true = torch.randn(D_IN, 1, generator=gen)
    losses, start = [], None
    for step in range(STEPS):
        if step == 5:
            start = time.perf_counter()   # steps 0-4 warm up
        X = torch.randn(size * BATCH, D_IN, generator=gen)
        Y = X @ w_true
        mine = slice(rank * BATCH, (rank + 1) * BATCH)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(X[mine]), Y[mine])
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total, group=group)           # the global mean loss
        losses.append(float(total) / size)
    return losses, (time.perf_counter() - start) / (STEPS - 5)


def main():
    world = collie.init()
    rank, size = world.rank, world.size
    dist.init_process_group("collie", init_method="tcp://127.0.0.1:%d" % free_port(world),
                            rank=rank, world_size=size)
    gloo = dist.new_group(backend="gloo")
    gloo_losses, gloo_t = train(gloo, rank, size)
    collie_losses, collie_t = train(None, rank, size)   # None: the default group (collie)
    worst = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(gloo_losses, collie_losses))
    ok = worst < 1e-5 and collie_losses[-1] < 0.5 * collie_losses[0]
    if rank == 0:
        for step in (0, 1, STEPS // 2, STEPS - 1):
            print("step %2d: loss gloo %.6f collie %.6f" % (step, gloo_losses[step],
                                                            collie_losses[step]))
        print("time per step: gloo %.3f ms, collie %.3f ms (largest relative loss "
              "difference %.2g)" % (gloo_t * 1e3, collie_t * 1e3, worst))
    dist.destroy_process_group()
    if not ok:
        print("rank %d: FAILED: losses differ by up to %.3g (or did not decrease)"
              % (rank, worst))
        return 1
    if rank == 0:
        print("%d ranks: collie and gloo losses agree" % size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
