"""Data-parallel SGD with numpy on collie: linear least squares, each rank holding a shard
of the data set.  Every step each rank computes the gradient of its mini-batch and the ranks
sum the gradients with one allreduce, so all ranks take the same step.

    python -m collie.run -n 4 examples/python_sgd.py

Checks (exit status 1 if one fails): the weights are bitwise identical on every rank; they
equal, to rounding, a single-process run over the same global mini-batches; and they
approach the weights the data was generated from.
"""
import sys

import numpy as np

import collie

N, D, BATCH, STEPS, LR = 4096, 16, 32, 300, 0.05


def make_data(seed=7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    w_true = rng.standard_normal(D)
    y = X @ w_true + 0.01 * rng.standard_normal(N)
    return X, y, w_true


def batch_rows(rank, size, step):
    """The rows of rank's mini-batch at a step: its shard is rows rank, rank+size, ..."""
    shard = np.arange(rank, N, size)
    return shard[(step * BATCH + np.arange(BATCH)) % len(shard)]


def gradient(X, y, w, rows):
    Xb = X[rows]
    return Xb.T @ (Xb @ w - y[rows])


def train(world, X, y):
    w = np.zeros(D)
    g = np.empty(D)
    for step in range(STEPS):
        g[:] = gradient(X, y, w, batch_rows(world.rank, world.size, step))
        world.allreduce(g, out=g)                       # sum over ranks, in place
        w -= LR * g / (BATCH * world.size)
        if step % 100 == 0 or step == STEPS - 1:
            rows = np.arange(world.rank, N, world.size)
            loss = np.array([np.sum((X[rows] @ w - y[rows]) ** 2)])
            total = world.reduce(loss, root=0)
            if world.rank == 0:
                print("step %3d  loss %.6f" % (step, total[0] / N))
    return w


def train_alone(X, y, size):
    """The same steps in one process: the global batch is every rank's batch."""
    w = np.zeros(D)
    for step in range(STEPS):
        g = sum(gradient(X, y, w, batch_rows(r, size, step)) for r in range(size))
        w -= LR * g / (BATCH * size)
    return w


def main():
    world = collie.init()
    X, y, w_true = make_data()
    w = train(world, X, y)
    ok = True
    if not (world.allreduce(w, op="max") == world.allreduce(w, op="min")).all():
        print("rank %d: weights differ between ranks" % world.rank)
        ok = False
    ref = train_alone(X, y, world.size)
    if not np.allclose(w, ref, rtol=1e-9, atol=1e-12):
        print("rank %d: differs from the single-process run by %g"
              % (world.rank, np.max(np.abs(w - ref))))
        ok = False
    if np.max(np.abs(w - w_true)) > 0.05:
        print("rank %d: did not converge (error %g)" % (world.rank, np.max(np.abs(w - w_true))))
        ok = False
    good = world.allreduce(np.array([1 if ok else 0], dtype=np.int32), op="min")[0]
    if world.rank == 0:
        print("%d ranks: %s (max |w - w_true| = %.2e)"
              % (world.size, "OK" if good else "FAILED", np.max(np.abs(w - w_true))))
    collie.finalize()
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
