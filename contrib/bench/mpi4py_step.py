# SPDX-License-Identifier: MIT
"""mpi4py_step.py [PARAMS] [STEPS]: milliseconds per data-parallel training
step through mpi4py, for contrib/bench/mpi_compare.sh.

A step is what a data-parallel loop does with its parameters: compute
float32 "gradients" of PARAMS elements (default 4 Mi, a 16 MiB model), sum
them across ranks with MPI_Allreduce in place, average, update the
parameters. The gradient computation is a fixed, cheap numpy expression, so
the figure moves with the exchange. After STEPS / 5 (at least 2) untimed
steps, rank 0 prints "step PARAMS_BYTES MEDIAN_MS ms", the median over
ranks of each rank's median step time. The ranks' parameters are then
compared bit for bit: a mismatch prints to stderr and exits 1, so a broken
transport cannot produce a figure.
"""
import sys
import time

import numpy as np
from mpi4py import MPI


def main():
    params = int(sys.argv[1]) if len(sys.argv) > 1 else 4 << 20
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(1234)
    w = rng.standard_normal(params, dtype=np.float32)
    grad = np.empty_like(w)
    lr = np.float32(0.01)
    times = []
    for step in range(-max(2, steps // 5), steps):
        comm.Barrier()
        t0 = time.perf_counter()
        np.multiply(w, np.float32(0.5 + 0.01 * rank), out=grad)
        grad += np.float32(step)
        comm.Allreduce(MPI.IN_PLACE, grad, op=MPI.SUM)
        grad *= np.float32(1.0 / size)
        w -= lr * grad
        if step >= 0:
            times.append(time.perf_counter() - t0)
    mine = float(np.median(times)) * 1e3
    meds = comm.gather(mine, root=0)
    digest = np.frombuffer(w.tobytes(), dtype=np.uint64).sum(dtype=np.uint64)
    digests = comm.allgather(int(digest))
    if len(set(digests)) != 1:
        print(f"# rank {rank}: parameters differ across ranks: {digests}",
              file=sys.stderr, flush=True)
        sys.exit(1)
    if rank == 0:
        print(f"step {params * 4} {float(np.median(meds)):.3f} ms", flush=True)


if __name__ == "__main__":
    main()
