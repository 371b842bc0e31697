"""numpy arrays from the shared heap (libcollie_heap.so), for python.shared_heap: run as
`python -m collie.run -n P --shared-heap heap_numpy.py`.  Every rank checks that its large
arrays lie in its shared heap (collie_heap_lookup, asked through ctypes), runs allreduce,
bcast and reduce on them (np.arange/np.zeros/np.empty: malloc and calloc; ndarray.resize:
realloc) against exact references, then forks: the child sees and overwrites the parent's
array and allocates, the parent's array must not change.  Prints "rank R: numpy heap OK"."""
import ctypes
import os
import sys

import numpy as np

import collie

N = 1 << 18   # 2 MiB of float64


def in_heap(a):
    try:
        lookup = ctypes.CDLL(None).collie_heap_lookup
    except AttributeError:
        return False
    lookup.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
                       ctypes.POINTER(ctypes.c_uint64)]
    fd, off = ctypes.c_int(), ctypes.c_uint64()
    return bool(lookup(a.ctypes.data, a.nbytes, ctypes.byref(fd), ctypes.byref(off)))


def check(ok, what):
    if not ok:
        print("rank %d: FAIL: %s" % (collie.world().rank, what), flush=True)
        sys.exit(1)


def main():
    w = collie.init()
    r, p = w.rank, w.size
    x = np.arange(N, dtype=np.float64) + r            # malloc
    z = np.zeros(N, dtype=np.float64)                  # calloc
    out = np.empty(N, dtype=np.float64)
    for a, name in ((x, "np.arange"), (z, "np.zeros"), (out, "np.empty")):
        check(in_heap(a), "%s's array is not in the shared heap" % name)
    check(not z.any(), "np.zeros is not zero")
    w.allreduce(x, out=out)
    check(np.array_equal(out, np.arange(N) * p + p * (p - 1) / 2), "allreduce")
    z += r + 1
    w.allreduce(z, out=z, op="max")
    check((z == p).all(), "allreduce in place (max)")
    b = np.full(N // 2 + 3, r, dtype=np.int64)
    w.bcast(b, root=p - 1)
    check((b == p - 1).all(), "bcast")
    g = np.arange(3 * N, dtype=np.int32) * (r + 1)
    g.resize(4 * N, refcheck=False)                     # realloc: contents kept, tail zero
    check(in_heap(g), "the resized array is not in the shared heap")
    y = w.allreduce(g)
    check(np.array_equal(y[:3 * N], np.arange(3 * N) * (p * (p + 1) // 2)) and not y[3 * N:].any(),
          "allreduce after resize")
    keep = x.copy()
    pid = os.fork()
    if pid == 0:
        ok = np.array_equal(x, keep) and not in_heap(x)
        x[:] = -1
        fresh = np.ones(N)
        os._exit(0 if ok and not in_heap(fresh) and fresh.sum() == N else 1)
    _, status = os.waitpid(pid, 0)
    check(status == 0, "the forked child saw wrong data or a shared heap")
    check(np.array_equal(x, keep), "the child's writes reached the parent")
    w.allreduce(x, out=out)
    check(np.array_equal(out, np.arange(N) * p + p * (p - 1) / 2), "allreduce after fork")
    print("rank %d: numpy heap OK" % r, flush=True)


main()
