"""torch.distributed collectives on backend "collie" against "gloo", in one run: the default
process group is collie's; a second group over the same ranks uses gloo (sharing the
default group's tcp:// store, whose port rank 0 picks and broadcasts with collie).  Sizes
are timed interleaved (collie, gloo, collie, gloo, ... --repeat times) so machine load hits
both alike.

    python -m collie.run -n 4 bench/torch_backend.py [--sizes 8,64K,1M,8M] [--dtype float32]
        [--colls all_reduce,all_gather,reduce_scatter] [--fresh-data]

Collectives: all_reduce (in place), all_gather (all_gather_into_tensor), reduce_scatter
(reduce_scatter_tensor).  A size is each rank's input: all_gather's output is size x ranks,
reduce_scatter's size / ranks.  --fresh-data writes new values into the input before every
call (a copy from one of two prepared tensors, not timed: each call is timed alone), as a
training step produces new gradients; without it the same buffers are reused hot.
Prints per collective and size: microseconds per call (median over the repeats of the
slowest rank's average) for collie and gloo, and gloo/collie.  Needs PyTorch.
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


class Case:
    """The tensors of one collective at one size, and how to call it on a group."""

    def __init__(self, coll, nbytes, dtype, size):
        n = max(1, nbytes // dtype.itemsize)
        if coll == "reduce_scatter":
            n = max(size, n // size * size)   # a multiple of size
        self.coll = coll
        self.x = torch.ones(n, dtype=dtype)
        self.out = None
        if coll == "all_gather":
            self.out = torch.empty(n * size, dtype=dtype)
        elif coll == "reduce_scatter":
            self.out = torch.empty(n // size, dtype=dtype)
        self.pool = [torch.rand(n).to(dtype) for _ in range(2)]   # --fresh-data's values

    def bytes(self):
        return self.x.numel() * self.x.element_size()

    def run(self, group):
        if self.coll == "all_reduce":
            dist.all_reduce(self.x, group=group)
        elif self.coll == "all_gather":
            dist.all_gather_into_tensor(self.out, self.x, group=group)
        else:
            dist.reduce_scatter_tensor(self.out, self.x, group=group)

    def refresh(self, k):
        self.x.copy_(self.pool[k % 2])


def time_case(case, group, iters, fresh):
    """The slowest rank's average seconds per call (with fresh: the calls alone)."""
    dist.barrier(group=group)
    if fresh:
        total = 0.0
        for k in range(iters):
            case.refresh(k)
            t0 = time.perf_counter()
            case.run(group)
            total += time.perf_counter() - t0
    else:
        t0 = time.perf_counter()
        for _ in range(iters):
            case.run(group)
        total = time.perf_counter() - t0
    mine = torch.tensor([total / iters], dtype=torch.float64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    return float(mine[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8,64K,1M,8M",
                    type=lambda s: [parse_size(x) for x in s.split(",")])
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--colls", default="all_reduce,all_gather,reduce_scatter",
                    type=lambda s: s.split(","))
    ap.add_argument("--fresh-data", action="store_true",
                    help="new input values before every call (not timed)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.2, help="target time per measurement")
    args = ap.parse_args()
    for c in args.colls:
        if c not in ("all_reduce", "all_gather", "reduce_scatter"):
            ap.error("unknown collective %r" % c)
    world = collie.init()
    dist.init_process_group("collie", init_method="tcp://127.0.0.1:%d" % free_port(world),
                            rank=world.rank, world_size=world.size)
    groups = {"collie": None, "gloo": dist.new_group(backend="gloo")}
    dtype = getattr(torch, args.dtype)
    if world.rank == 0:
        print("%d ranks, %s%s; microseconds per call" % (
            world.size, args.dtype, ", fresh data" if args.fresh_data else ""))
        print("%-15s %10s %12s %12s %12s" % ("collective", "bytes", "collie", "gloo",
                                             "gloo/collie"))
    for coll in args.colls:
        for nbytes in args.sizes:
            case = Case(coll, nbytes, dtype, world.size)
            probe = time_case(case, None, 3, args.fresh_data)
            iters = max(3, min(10000, int(args.seconds / max(probe, 1e-7))))
            ibuf = torch.tensor([iters], dtype=torch.int64)   # the same on every rank
            world.bcast(ibuf, root=0)
            iters = int(ibuf[0])
            runs = {"collie": [], "gloo": []}
            for _ in range(args.repeat):
                for name, group in groups.items():
                    runs[name].append(time_case(case, group, iters, args.fresh_data))
            c, g = (statistics.median(runs[k]) * 1e6 for k in ("collie", "gloo"))
            if world.rank == 0:
                print("%-15s %10d %12.1f %12.1f %12.2f" % (coll, case.bytes(), c, g, g / c),
                      flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
