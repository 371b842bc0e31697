"""Python allreduce latency against C: collie's Python binding (world.allreduce on numpy
float64 arrays) against collie-bench (the C API, blocking mode) at the same sizes, ranks and
iteration counts, runs interleaved (C, Python, C, Python, ...) so machine load hits both alike.

    python bench/python_latency.py --collie-bench build/collie-bench [-n 2] [--sizes 8,1M]

The Python interpreter running this must have the collie package installed (pip install
<checkout>).  Prints per size: C and Python microseconds per call (median over --repeat
runs of the slowest rank's average) and Python's overhead.  --smoke: tiny counts (tests).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s.strip())
    if not m:
        raise argparse.ArgumentTypeError("bad size %r" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def worker(args):
    import numpy as np
    import collie
    world = collie.init()
    x = np.ones(args.bytes // 8)
    out = np.empty_like(x)
    for _ in range(args.warmup):
        world.allreduce(x, out=out)
    results = []
    for variant in ("out", "new"):
        world.barrier()
        t0 = time.perf_counter()
        if variant == "out":
            for _ in range(args.iters):
                world.allreduce(x, out=out)
        else:
            for _ in range(args.iters):
                world.allreduce(x)
        us = (time.perf_counter() - t0) / args.iters * 1e6
        slowest = world.allreduce(np.array([us]), op="max")[0]
        results.append(slowest)
    if world.rank == 0:
        print("PY %d %.3f %.3f" % (args.bytes, results[0], results[1]))
    collie.finalize()


def run_c(args, size):
    cmd = [args.collie_run, "-n", str(args.ranks), args.collie_bench, "--coll", "allreduce",
           "--mode", "blocking", "--min-bytes", str(size), "--max-bytes", str(size),
           "--iters", str(args.iters), "--warmup", str(args.warmup)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == str(size):
            return float(f[col_of(out, "max_us")])
    raise RuntimeError("no row for %d bytes in collie-bench output:\n%s" % (size, out))


def col_of(out, name):
    """Index of a column (e.g. "max_us", the slowest rank) in collie-bench's header."""
    for line in out.splitlines():
        f = line.lstrip("#").split()
        if f and f[0] == "bytes" and name in f:
            return f.index(name)
    raise RuntimeError("no '%s' column in collie-bench output:\n%s" % (name, out))


def run_py(args, size):
    cmd = [sys.executable, "-m", "collie.run", "-n", str(args.ranks), sys.executable,
           os.path.abspath(__file__), "--worker", "--bytes", str(size),
           "--iters", str(args.iters), "--warmup", str(args.warmup)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    f = next(line.split() for line in out.splitlines() if line.startswith("PY "))
    return float(f[2]), float(f[3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--bytes", type=int, default=8, help=argparse.SUPPRESS)
    ap.add_argument("-n", "--ranks", type=int, default=2)
    ap.add_argument("--sizes", default="8,1M")
    ap.add_argument("--iters", type=int, default=0, help="calls per run (default by size)")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--collie-bench", default="build/collie-bench")
    ap.add_argument("--collie-run", default=None, help="default: next to collie-bench")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    args.collie_run = args.collie_run or os.path.join(os.path.dirname(args.collie_bench),
                                                      "collie-run")
    if args.smoke:
        args.repeat, args.warmup = 1, 5
    print("allreduce float64 sum, %d ranks, blocking; us per call (slowest rank), median of %d"
          % (args.ranks, args.repeat))
    print("%10s %10s %12s %12s %10s" % ("bytes", "C", "Python out=", "Python new", "overhead"))
    for size in (parse_size(s) for s in args.sizes.split(",")):
        iters = args.iters or (20 if args.smoke else 20000 if size <= 4096 else 500)
        run_args = argparse.Namespace(**vars(args))
        run_args.iters = iters
        c, p, n = [], [], []
        for _ in range(args.repeat):
            c.append(run_c(run_args, size))
            out, new = run_py(run_args, size)
            p.append(out)
            n.append(new)
        mc, mp, mn = (statistics.median(v) for v in (c, p, n))
        print("%10d %10.3f %12.3f %12.3f %+9.3f" % (size, mc, mp, mn, mp - mc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
