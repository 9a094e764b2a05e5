# SPDX-License-Identifier: MIT
"""One rank of coll_vs_torch.sh: torch.distributed.all_reduce (SUM, float32,
CPU tensors) on BACKEND (gloo or weft), sizes MIN..MAX bytes, x8 a step.

    RANK=.. WORLD_SIZE=.. MASTER_ADDR=.. MASTER_PORT=.. \\
        python3 torch_allreduce.py BACKEND MIN MAX REPS

Per size: a warm-up, then REPS timed batches of ITERS all_reduces (ITERS
shrinks with the size so a batch takes about the same time); a batch's
time is the slowest rank's (an all_reduce of the batch times, MAX), the
size's figure the median batch. Rank 0 prints CSV lines:
backend,ranks,bytes,us_per_op,busbw_GBps (busbw = bytes/t x 2(n-1)/n).
"""
import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    backend, lo, hi, reps = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), int(sys.argv[4])
    if backend == "weft":
        import weft.c10d  # noqa: F401 - registers the backend
    dist.init_process_group(backend)
    n, rank = dist.get_world_size(), dist.get_rank()
    size = lo
    while size <= hi:
        count = max(1, size // 4)
        t = torch.ones(count, dtype=torch.float32)
        iters = max(2, min(200, (4 << 20) // size))
        for _ in range(max(2, iters // 4)):
            dist.all_reduce(t)
        times = []
        for _ in range(reps):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            dt = torch.tensor([(time.perf_counter() - t0) / iters],
                              dtype=torch.float64)
            dist.all_reduce(dt, dist.ReduceOp.MAX)
            times.append(float(dt))
        sec = statistics.median(times)
        if rank == 0:
            busbw = count * 4 / sec * 2 * (n - 1) / n / 1e9
            print("%s,%d,%d,%.2f,%.3f" % (backend, n, count * 4, sec * 1e6,
                                          busbw), flush=True)
        size *= 8
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
