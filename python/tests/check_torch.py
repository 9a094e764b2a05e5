# SPDX-License-Identifier: MIT
"""The weft torch.distributed backend, checked element by element against
a serial computation and against Gloo on the same ranks.

Run as every rank of a job with torch's env:// variables (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT); test_python.sh starts 2 and 4
ranks over shm and tcp. The default group is weft's; a second group of the
same ranks is Gloo's, so every collective runs on both and the results are
compared. Inputs are small integers (in every dtype), so any reduction
order gives the serial answer exactly; inexact float sums are compared with
Gloo's within rounding and across ranks bitwise.
Prints "ok - ..." / "not ok - ..." lines; exits 1 on any failure.
"""
import sys
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist

import weft.c10d  # noqa: F401 - registers the backend "weft"

R = dist.ReduceOp
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float32, torch.float64]
OPS = {"SUM": R.SUM, "PRODUCT": R.PRODUCT, "MIN": R.MIN, "MAX": R.MAX,
       "BAND": R.BAND, "BOR": R.BOR, "BXOR": R.BXOR}
COUNTS = [0, 1, 7, 1000, 1 << 18]

failures = 0
checks = 0
notes = []


def report(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
        print("not ok - " + what, flush=True)


def gen(dt, op, r, n):
    """Rank r's input of n elements for op: small integers whose serial
    reduction is exact in every dtype (wrapping where numpy would)."""
    i = torch.arange(n, dtype=torch.int64)
    if op == "SUM":
        x = (r * 7 + i * 13) % 19 - 9
    elif op == "PRODUCT":
        x = torch.tensor([2, -1, 1, 1], dtype=torch.int64)[(r + i) % 4]
    elif op in ("MIN", "MAX"):
        x = (r * 37 + i * 11) % 61 - 30
    else:
        x = (r * 1103515245 + i * 12345) % 251
    if dt == torch.uint8:
        x = x % 256
    return x.to(dt)


def serial(dt, op, size, n):
    stack = torch.stack([gen(dt, op, r, n) for r in range(size)])
    if op == "SUM":
        return stack.sum(0, dtype=dt)
    if op == "PRODUCT":
        return stack.prod(0, dtype=dt)
    if op == "MIN":
        return stack.min(0).values
    if op == "MAX":
        return stack.max(0).values
    f = {"BAND": torch.bitwise_and, "BOR": torch.bitwise_or,
         "BXOR": torch.bitwise_xor}[op]
    out = stack[0].clone()
    for k in range(1, size):
        out = f(out, stack[k])
    return out


def same(a, b):
    """Equal element by element and bit for bit (dtype and shape too)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():
        a = a.contiguous().view(torch.uint8)
        b = b.contiguous().view(torch.uint8)
    return torch.equal(a, b)


def first_diff(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return "%s %s, want %s %s" % (a.dtype, tuple(a.shape), b.dtype,
                                      tuple(b.shape))
    idx = torch.nonzero(a.reshape(-1) != b.reshape(-1))
    k = int(idx[0]) if len(idx) else 0
    return "element %d: %r, want %r" % (k, a.reshape(-1)[k].item(),
                                        b.reshape(-1)[k].item())


def gloo_try(what, f):
    """Gloo's answer, or None (noted once) where Gloo refuses the case."""
    try:
        return f()
    except RuntimeError as e:
        note = "gloo refuses %s (%s)" % (what, str(e).splitlines()[0][:60])
        if note not in notes:
            notes.append(note)
        return None


def check_all_reduce(rank, size, gloo):
    for dt in INTS + FLOATS:
        for name, op in OPS.items():
            if dt in FLOATS and name in ("BAND", "BOR", "BXOR"):
                continue
            for n in COUNTS:
                if n == COUNTS[-1] and name not in ("SUM", "MAX"):
                    continue
                want = serial(dt, name, size, n)
                what = "all_reduce %s %s n=%d" % (dt, name, n)
                t = gen(dt, name, rank, n)
                dist.all_reduce(t, op)
                report(same(t, want), what + ("" if same(t, want) else
                                              ": " + first_diff(t, want)))

                def on_gloo():
                    g = gen(dt, name, rank, n)
                    dist.all_reduce(g, op, group=gloo)
                    return g
                g = gloo_try("all_reduce of %s" % dt, on_gloo)
                if g is not None:
                    report(same(t, g), what + " equals gloo's")
    # a strided (non-contiguous) tensor: staged, then copied back
    base = torch.zeros(64, dtype=torch.int32)
    view = base[::2]
    view.copy_(gen(torch.int32, "SUM", rank, 32))
    dist.all_reduce(view)
    report(same(view, serial(torch.int32, "SUM", size, 32)) and
           int(base[1::2].abs().sum()) == 0,
           "all_reduce of a strided view, the gaps untouched")


def check_inexact(rank, size, gloo):
    """Float sums of random numbers: weft's bits are every rank's, and
    Gloo's result is the same sum in another order."""
    for dt in FLOATS:
        x = torch.randn(4099, dtype=torch.float64,
                        generator=torch.Generator().manual_seed(rank)).to(dt)
        w, g = x.clone(), x.clone()
        dist.all_reduce(w)
        dist.all_reduce(g, group=gloo)
        every = [torch.empty_like(w) for _ in range(size)]
        dist.all_gather(every, w)
        report(all(same(e, w) for e in every),
               "all_reduce %s random: bitwise equal on every rank" % dt)
        want = sum(torch.randn(4099, dtype=torch.float64,
                               generator=torch.Generator().manual_seed(k))
                   .to(dt).double() for k in range(size))
        tol = 1e-5 if dt == torch.float32 else 1e-12
        report(torch.allclose(w.double(), want, rtol=tol, atol=tol) and
               torch.allclose(w, g, rtol=tol, atol=tol),
               "all_reduce %s random: within rounding of the serial sum "
               "and of gloo's" % dt)


def check_async(rank, size):
    """async_op: several in flight, waited in reverse order; and a wait
    that must last until the slowest rank has joined in."""
    ts = [gen(torch.int64, "SUM", rank + k, 1000 * (k + 1))
          for k in range(6)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        report(w.wait() is True, "async all_reduce: wait() returns True")
    for k, t in enumerate(ts):
        want = torch.stack([gen(torch.int64, "SUM", r + k, 1000 * (k + 1))
                            for r in range(size)]).sum(0)
        report(same(t, want), "async all_reduce %d of 6 after wait()" % k)
    report(all(w.is_completed() and w.is_success() for w in works),
           "async works completed and successful")
    # the last rank starts 0.5 s late: everyone else's wait() must last
    late = size - 1
    if rank == late:
        time.sleep(0.5)
    t = torch.full((5,), rank + 1, dtype=torch.float64)
    t0 = time.monotonic()
    w = dist.all_reduce(t, async_op=True)
    early = w.is_completed()
    w.wait()
    took = time.monotonic() - t0
    want = float(size * (size + 1) // 2)
    if rank != late:
        report(not early and took > 0.3,
               "wait() waited for the late rank (%.2f s)" % took)
    report(bool((t == want).all()), "late all_reduce's result")
    # get_future() hands a completed future holding the tensors
    t = torch.ones(3, dtype=torch.int32)
    fut = dist.all_reduce(t, async_op=True).get_future()
    report(fut.done() and same(fut.value()[0], torch.full((3,), size,
                                                          dtype=torch.int32)),
           "get_future(): done, holding the result")


def check_broadcast(rank, size, gloo):
    for dt in INTS + FLOATS:
        for n in (0, 1, 1000, 1 << 18):
            for root in range(size):
                t = gen(dt, "BXOR", rank, n)
                dist.broadcast(t, root)
                report(same(t, gen(dt, "BXOR", root, n)),
                       "broadcast %s n=%d root=%d" % (dt, n, root))
    t = gen(torch.float32, "SUM", rank, 77)
    g = t.clone()
    dist.broadcast(t, size - 1)
    dist.broadcast(g, size - 1, group=gloo)
    report(same(t, g), "broadcast equals gloo's")


def check_all_gather(rank, size, gloo):
    for dt in INTS + FLOATS:
        for n in (0, 1, 1000, 1 << 17):
            x = gen(dt, "BXOR", rank, n)
            want = [gen(dt, "BXOR", r, n) for r in range(size)]
            outs = [torch.full_like(x, 7) for _ in range(size)]
            dist.all_gather(outs, x)
            report(all(same(o, w) for o, w in zip(outs, want)),
                   "all_gather %s n=%d" % (dt, n))
            flat = torch.empty(size * n, dtype=dt)
            dist.all_gather_into_tensor(flat, x)
            report(same(flat, torch.cat(want)),
                   "all_gather_into_tensor %s n=%d" % (dt, n))
    x = gen(torch.float64, "SUM", rank, 33).reshape(3, 11)
    outs = [torch.empty_like(x) for _ in range(size)]
    gouts = [torch.empty_like(x) for _ in range(size)]
    dist.all_gather(outs, x)
    dist.all_gather(gouts, x, group=gloo)
    report(all(same(a, b) for a, b in zip(outs, gouts)),
           "all_gather 2-D equals gloo's")


def check_reduce_scatter(rank, size, gloo):
    for dt in (torch.int32, torch.int64, torch.float32, torch.float64):
        for name in ("SUM", "MAX"):
            for n in (0, 1, 999, 1 << 16):
                full = serial(dt, name, size, n * size)
                mine = gen(dt, name, rank, n * size)
                out = torch.empty(n, dtype=dt)
                dist.reduce_scatter(out, list(mine.split(n)) if n else
                                    [torch.empty(0, dtype=dt)] * size,
                                    OPS[name])
                want = full[rank * n:(rank + 1) * n]
                report(same(out, want), "reduce_scatter %s %s n=%d" %
                       (dt, name, n))
                out2 = torch.empty(n, dtype=dt)
                dist.reduce_scatter_tensor(out2, mine, OPS[name])
                report(same(out2, want), "reduce_scatter_tensor %s %s n=%d"
                       % (dt, name, n))
    mine = gen(torch.float32, "SUM", rank, 8 * size)
    g = torch.empty(8)

    def on_gloo():
        dist.reduce_scatter(g, list(mine.split(8)), group=gloo)
        return g
    if gloo_try("reduce_scatter", on_gloo) is not None:
        w = torch.empty(8)
        dist.reduce_scatter(w, list(mine.split(8)))
        report(same(w, g), "reduce_scatter equals gloo's")


def check_barrier(rank, size):
    for _ in range(20):
        dist.barrier()
    # nobody leaves a barrier before the last rank has entered it
    if rank == 0:
        time.sleep(0.3)
    t0 = time.monotonic()
    dist.barrier()
    took = time.monotonic() - t0
    report(rank == 0 or took > 0.2,
           "barrier held until rank 0 came (%.2f s)" % took)


def expect_raise(what, f):
    try:
        f()
    except (RuntimeError, TypeError, ValueError):
        report(True, what)
        return
    report(False, what + ": no error")


def check_bad_input(rank, size):
    # refused before anything reaches the fabric, alike on every rank
    expect_raise("float16 refused",
                 lambda: dist.all_reduce(torch.ones(4, dtype=torch.float16)))
    expect_raise("AVG refused", lambda: dist.all_reduce(torch.ones(4), R.AVG))
    expect_raise("all_gather of the wrong size refused",
                 lambda: dist.all_gather([torch.ones(3)] * size,
                                         torch.ones(4)))
    t = torch.ones(3, dtype=torch.int32)
    dist.all_reduce(t)
    report(same(t, torch.full((3,), size, dtype=torch.int32)),
           "all_reduce after bad input")


def main():
    dist.init_process_group("weft", timeout=timedelta(seconds=120))
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    pg = dist.distributed_c10d._get_default_group()
    report(dist.get_backend() == "weft" and
           isinstance(pg, weft.c10d.ProcessGroupWeft),
           "the default group is weft's")
    steps = [lambda: check_all_reduce(rank, size, gloo),
             lambda: check_inexact(rank, size, gloo),
             lambda: check_async(rank, size),
             lambda: check_broadcast(rank, size, gloo),
             lambda: check_all_gather(rank, size, gloo),
             lambda: check_reduce_scatter(rank, size, gloo),
             lambda: check_barrier(rank, size),
             lambda: check_bad_input(rank, size)]
    for step in steps:
        try:
            step()
        except Exception:           # noqa: BLE001 - report, go on
            report(False, "a step raised:\n" + traceback.format_exc())
            break
    for n in notes:
        print("# " + n)
    print("%s - torch.distributed on weft, rank %d of %d over %s: %d checks, "
          "%d failed" % ("not ok" if failures else "ok", rank, size,
                         pg.provider, checks, failures), flush=True)
    dist.destroy_process_group()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
