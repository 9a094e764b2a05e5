# SPDX-License-Identifier: MIT
"""Data-parallel training with the weft package: parameter exchange by
allreduce, the way distributed ML jobs keep their replicas in step.

Every rank holds a replica of a small two-layer network (numpy only) and a
shard of a synthetic regression data set. Rank 0 initialises the
parameters and broadcasts them; every step each rank computes its
gradients, one allreduce sums them (all parameters packed in one float32
vector, as DDP buckets them) and every rank applies the same averaged
step. At the end allgather shows that every replica holds bit-for-bit the
same parameters, and the result is compared with one process training on
the whole data set (float sums in another order: close, not equal).

    mpirun -np 3 python3 param_exchange.py
    RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \\
        python3 param_exchange.py &
    RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \\
        python3 param_exchange.py

Exits 1 when the replicas differ or stray from the single process.
"""
import argparse
import sys

import numpy as np

import weft

FEATURES, HIDDEN, SAMPLES = 16, 32, 1536


def data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    w = rng.standard_normal(FEATURES).astype(np.float32)
    y = np.tanh(x @ w)[:, None] + 0.05 * rng.standard_normal((SAMPLES, 1))
    return x, y.astype(np.float32)


def init_params():
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((FEATURES, HIDDEN)) / 4).astype(np.float32),
            np.zeros(HIDDEN, np.float32),
            (rng.standard_normal((HIDDEN, 1)) / 4).astype(np.float32),
            np.zeros(1, np.float32)]


def grads(params, x, y):
    """Gradients of the summed squared error (sums, so shards add up)."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    err = h @ w2 + b2 - y
    dh = (err @ w2.T) * (1 - h * h)
    return [x.T @ dh, dh.sum(0), h.T @ err, err.sum(0)], float((err ** 2).sum())


def pack(arrays):
    return np.concatenate([a.ravel() for a in arrays]).astype(np.float32)


def unpack(vec, like):
    out, off = [], 0
    for a in like:
        out.append(vec[off:off + a.size].reshape(a.shape))
        off += a.size
    return out


def train(params, shard, steps, lr, allreduce):
    x, y = shard
    flat = pack(params)
    for step in range(steps):
        g, loss = grads(unpack(flat, params), x, y)
        # one vector: the gradients and the loss, summed over all ranks
        g = allreduce(np.append(pack(g), np.float32(loss)))
        flat -= np.float32(lr / SAMPLES) * g[:-1]
        if step % 20 == 0 or step == steps - 1:
            yield step, float(g[-1]) / SAMPLES
    params[:] = unpack(flat, params)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--provider")
    opt = ap.parse_args()

    comm = weft.init(provider=opt.provider)
    me, n = comm.rank, comm.size
    x, y = data()
    shard = (x[me::n], y[me::n])

    # rank 0's initial parameters reach everyone
    params = init_params() if me == 0 else \
        [np.zeros_like(p) for p in init_params()]
    for p in params:
        comm.broadcast(p, root=0)

    for step, loss in train(params, shard, opt.steps, opt.lr,
                            comm.allreduce):
        if me == 0:
            print("step %3d  loss %.5f" % (step, loss))

    # every replica the same, bit for bit
    mine = pack(params)
    every = comm.allgather(mine)
    same = all(np.array_equal(every[r].view(np.uint32), mine.view(np.uint32))
               for r in range(n))
    # and where one process training on everything ends
    ref = init_params()
    for _ in train(ref, (x, y), opt.steps, opt.lr, lambda v: v):
        pass
    gap = float(np.max(np.abs(mine - pack(ref))))
    close = gap < 1e-4
    if me == 0:
        print("%d ranks over %s: replicas %s, max |distributed - single| "
              "= %.2e (%s)" % (n, comm.provider,
                               "identical" if same else "DIFFER", gap,
                               "ok" if close else "too far"))
    weft.finalize()
    return 0 if same and close else 1


if __name__ == "__main__":
    sys.exit(main())
