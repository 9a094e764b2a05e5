# SPDX-License-Identifier: MIT
"""Data-parallel parameter exchange with mpi4py, the way a training loop
does it: each rank computes float32 "gradients" for a few parameter tensors,
they are summed with MPI_Allreduce and averaged, and every rank applies the
same update. Every rank also recomputes all ranks' gradients serially and
checks the exchanged average and the parameters against that.

mpi4py initializes MPI at its default thread level, MPI_THREAD_MULTIPLE,
so this also runs the transport in its thread-safe mode.
Prints one "ok"/"not ok" line per check on rank 0; exit status 1 on failure.
"""
import sys

import numpy as np
from mpi4py import MPI

STEPS = 4
LR = np.float32(0.05)
# Tensor sizes in elements: a bias, a small layer and a 2 MiB one,
# so both the eager and the large-message paths carry the exchange.
SHAPES = [(7,), (64, 33), (512, 1024)]

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failures = 0


def report(name, errors):
    """Collective: sums the ranks' error counts, rank 0 prints the line."""
    global failures
    total = comm.allreduce(errors, op=MPI.SUM)
    if total:
        failures += 1
    if rank == 0:
        status = "not ok" if total else "ok"
        detail = f" ({total} errors)" if total else ""
        print(f"{status} - {name}{detail} ({size} ranks)", flush=True)


def make_grads(bases):
    """grads(step, r): rank r's gradients at a step. Each is the same random
    tensor scaled and shifted by (step, r), so any rank can recompute every
    rank's gradients cheaply, and a gradient that came from the wrong rank,
    step or element shows in the average."""
    def grads(step, r):
        scale = np.float32(1.0 + 0.25 * r + 0.125 * step)
        shift = np.float32(0.01 * (r - step))
        return [b * scale + shift for b in bases]
    return grads


def fail(msg):
    print(f"# rank {rank}: {msg}", file=sys.stderr, flush=True)
    return 1


def main():
    errors = 0
    level = MPI.Query_thread()
    if level != MPI.THREAD_MULTIPLE:
        errors += fail(f"thread level {level}, expected MPI_THREAD_MULTIPLE")
    report("mpi4py initialized MPI at MPI_THREAD_MULTIPLE", errors)

    rng = np.random.default_rng(7)
    params = [rng.standard_normal(s, dtype=np.float32) for s in SHAPES]
    grads = make_grads([rng.standard_normal(s, dtype=np.float32) for s in SHAPES])
    ref = [p.astype(np.float64) for p in params]
    errors = 0
    for step in range(STEPS):
        mine = grads(step, rank)
        serial = [np.zeros(s) for s in SHAPES]
        for r in range(size):
            for t, g in enumerate(grads(step, r)):
                serial[t] += g
        serial = [s / size for s in serial]
        for t, g in enumerate(mine):
            avg = np.empty_like(g)
            if t % 2:
                # in place, as frameworks do to save a buffer
                avg[...] = g
                comm.Allreduce(MPI.IN_PLACE, avg, op=MPI.SUM)
            else:
                comm.Allreduce(g, avg, op=MPI.SUM)
            avg /= np.float32(size)
            # float32 sums in another order differ by a few ulps
            if not np.allclose(avg, serial[t], rtol=1e-5, atol=1e-5 * size):
                bad = np.argmax(np.abs(avg - serial[t]))
                errors += fail(f"step {step} tensor {t}: average [{bad}] = "
                               f"{avg.flat[bad]}, serial {serial[t].flat[bad]}")
            params[t] -= LR * avg
            ref[t] -= float(LR) * serial[t]
    report(f"Allreduce-averaged float32 gradients match the serial sum, {STEPS} steps",
           errors)

    errors = 0
    for t, p in enumerate(params):
        if not np.allclose(p, ref[t], rtol=1e-4, atol=1e-5):
            errors += fail(f"tensor {t}: parameters drifted from the serial run")
        # every rank applied the same averages: parameters must be bitwise equal
        root = p.copy()
        comm.Bcast(root, root=0)
        if not np.array_equal(root, p):
            errors += fail(f"tensor {t}: parameters differ from rank 0's")
    report("parameters equal on every rank and to the serial run", errors)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
