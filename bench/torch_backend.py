"""torch.distributed allreduce on backend "collie" against "gloo", in one run: the default
process group is collie's; a second group over the same ranks uses gloo (sharing the
default group's tcp:// store, whose port rank 0 picks and broadcasts with collie).  Sizes
are timed interleaved (collie, gloo, collie, gloo, ... --repeat times) so machine load hits
both alike.

    python -m collie.run -n 4 bench/torch_backend.py [--sizes 8,64K,1M,8M] [--dtype float32]

Prints per size: microseconds per dist.all_reduce (median over the repeats of the slowest
rank's average) for collie and gloo, and gloo/collie.  Needs PyTorch.
"""
import argparse
import re
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist

import collie
import collie.torch  # noqa: F401  (registers backend "collie")


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s.strip())
    if not m:
        raise argparse.ArgumentTypeError("bad size %r" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def free_port(world):
    port = torch.zeros(1, dtype=torch.int64)
    if world.rank == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port[0] = s.getsockname()[1]
    world.bcast(port, root=0)
    return int(port[0])


def time_allreduce(t, group, iters):
    """The slowest rank's average seconds per all_reduce."""
    dist.barrier(group=group)
    t0 = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t, group=group)
    mine = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    return float(mine[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8,64K,1M,8M",
                    type=lambda s: [parse_size(x) for x in s.split(",")])
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.2, help="target time per measurement")
    args = ap.parse_args()
    world = collie.init()
    dist.init_process_group("collie", init_method="tcp://127.0.0.1:%d" % free_port(world),
                            rank=world.rank, world_size=world.size)
    groups = {"collie": None, "gloo": dist.new_group(backend="gloo")}
    dtype = getattr(torch, args.dtype)
    if world.rank == 0:
        print("%d ranks, %s; microseconds per dist.all_reduce" % (world.size, args.dtype))
        print("%10s %12s %12s %12s" % ("bytes", "collie", "gloo", "gloo/collie"))
    for nbytes in args.sizes:
        t = torch.ones(max(1, nbytes // dtype.itemsize), dtype=dtype)
        probe = time_allreduce(t, None, 3)
        iters = max(3, min(10000, int(args.seconds / max(probe, 1e-7))))
        ibuf = torch.tensor([iters], dtype=torch.int64)   # the same on every rank: rank 0's
        world.bcast(ibuf, root=0)
        iters = int(ibuf[0])
        runs = {"collie": [], "gloo": []}
        for _ in range(args.repeat):
            for name, group in groups.items():
                runs[name].append(time_allreduce(t, group, iters))
        c, g = (statistics.median(runs[k]) * 1e6 for k in ("collie", "gloo"))
        if world.rank == 0:
            print("%10d %12.1f %12.1f %12.2f" % (t.numel() * dtype.itemsize, c, g, g / c))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
