# SPDX-License-Identifier: MIT
"""The weft package's collectives, every result element checked against
numpy computing the same thing serially.

Run as every rank of a job (test_python.sh starts 2 and 3 over shm). Each
rank generates every rank's inputs (a pure function of rank and index), so
it can compute the serial result itself. Inputs are chosen so that every
reduction is exact (small integers, powers of two; integers wrap as numpy
wraps them), so any reduction order gives numpy's answer bit for bit.
Prints "ok - ..." / "not ok - ..." lines; exits 1 on any failure.
"""
import sys
import traceback

import numpy as np

import weft

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
        np.int64, np.uint64]
FLOATS = [np.float32, np.float64]
CPLX = [np.complex64, np.complex128]
DTYPES = INTS + FLOATS + CPLX
OPS = ["sum", "prod", "min", "max", "band", "bor", "bxor", "land", "lor",
       "lxor"]
COUNTS = [0, 1, 7, 1000]

failures = 0
checks = 0


def report(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
        print("not ok - " + what, flush=True)


def as_dtype(x, dt):
    """int64 values into dt, wrapping for the narrower integers."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return x.astype(np.uint64).astype(dt) if dt.kind == "u" \
            else x.astype(dt)
    return x.astype(dt)


def gen(dt, op, r, n):
    """Rank r's input of n elements for op."""
    i = np.arange(n, dtype=np.int64)
    dt = np.dtype(dt)
    if op == "sum":
        x = (r * 7 + i * 13) % 19 - 9
        y = (r * 3 + i * 5) % 11 - 5
    elif op == "prod":
        x = np.array([2, -1, 1, 1], np.int64)[(r + i) % 4]
        y = np.where((r + i) % 3 == 0, 1, 0)
        x = np.where(y == 1, 0, x)
    elif op in ("min", "max"):
        x = (r * 37 + i * 11) % 61 - 30
        y = np.zeros_like(x)
    elif op in ("land", "lor", "lxor"):
        x = np.where((r + 2 * i) % 3 == 0, 0, (r * i) % 5 + 1)
        y = np.where(((r + i) % 2 == 1) & (x != 0), x, 0)
        x = np.where(y != 0, 0, x)
    else:   # bitwise: every bit pattern of the type
        rng = np.random.default_rng(1000 * r + len(op))
        raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
        return raw.view(dt).copy()
    if dt.kind == "c":
        return (x + 1j * y).astype(dt)
    return as_dtype(x, dt)


def serial(dt, op, size, n):
    """What the allreduce of every rank's gen() must give, or None when
    numpy has no such reduction for the type (then weft must refuse)."""
    dt = np.dtype(dt)
    stack = np.stack([gen(dt, op, r, n) for r in range(size)]) \
        if n else np.zeros((size, 0), dt)
    if op == "sum":
        return np.sum(stack, axis=0, dtype=dt)
    if op == "prod":
        return np.prod(stack, axis=0, dtype=dt)
    if op in ("min", "max"):
        if dt.kind == "c":
            return None
        return (np.min if op == "min" else np.max)(stack, axis=0)
    if op in ("band", "bor", "bxor"):
        if dt.kind not in "iu":
            return None
        f = {"band": np.bitwise_and, "bor": np.bitwise_or,
             "bxor": np.bitwise_xor}[op]
        return f.reduce(stack, axis=0)
    f = {"land": np.logical_and, "lor": np.logical_or,
         "lxor": np.logical_xor}[op]
    return f.reduce(stack != 0, axis=0).astype(dt)


def same(a, b):
    """Bitwise equal, element by element (NaN-proof, -0.0 told apart)."""
    return a.shape == b.shape and a.dtype == b.dtype and \
        np.array_equal(a.view(np.uint8), b.view(np.uint8))


def first_diff(a, b):
    idx = np.nonzero(a != b)[0]
    return "element %d: %r, want %r" % (idx[0], a[idx[0]], b[idx[0]]) \
        if len(idx) else "shape/dtype"


def check_allreduce(c):
    for dt in DTYPES:
        for op in OPS:
            for n in COUNTS:
                want = serial(dt, op, c.size, n)
                a = gen(dt, op, c.rank, n)
                what = "allreduce %s %s n=%d" % (np.dtype(dt).name, op, n)
                if want is None:
                    try:
                        c.allreduce(a, op)
                        report(False, what + ": not refused")
                    except weft.FabricError:
                        report(True, what)
                    continue
                got = c.allreduce(a, op)
                report(same(got, want),
                       what + ": " + ("" if same(got, want)
                                      else first_diff(got, want)))
                # in place (MPI_IN_PLACE's shape: out is the input)
                b = a.copy()
                c.allreduce(b, op, out=b)
                report(same(b, want), what + " in place")
                report(same(a, gen(dt, op, c.rank, n)),
                       what + ": input left alone")


def check_large(c):
    """Sizes that take the pipelined ring: 4 MiB of float32 and int64."""
    for dt, n in ((np.float32, 1 << 20), (np.int64, 1 << 19)):
        want = serial(dt, "sum", c.size, n)
        got = c.allreduce(gen(dt, "sum", c.rank, n))
        report(same(got, want), "allreduce %s sum n=%d" %
               (np.dtype(dt).name, n))


def check_reproducible(c):
    """Inexact float sums: every rank gets the same bits, every time."""
    rng = np.random.default_rng(c.rank)
    a = rng.standard_normal(4099).astype(np.float32)
    r1 = c.allreduce(a)
    r2 = c.allreduce(a)
    everyone = c.allgather(r1)
    report(same(r1, r2), "float32 allreduce repeats bitwise")
    report(all(same(everyone[k], r1) for k in range(c.size)),
           "float32 allreduce bitwise equal on every rank")
    report(np.allclose(r1, sum(np.random.default_rng(k).standard_normal(
        4099).astype(np.float32).astype(np.float64) for k in range(c.size)),
        rtol=1e-5, atol=1e-5), "float32 allreduce close to the float64 sum")


def check_allgather(c):
    for dt in DTYPES:
        for n in COUNTS + [100000]:
            a = gen(dt, "band", c.rank, n)
            want = np.stack([gen(dt, "band", r, n) for r in range(c.size)]) \
                if n else np.zeros((c.size, 0), dt)
            got = c.allgather(a)
            report(same(got, want), "allgather %s n=%d" %
                   (np.dtype(dt).name, n))
    # a 2-D array keeps its shape under the rank axis
    a = np.arange(6, dtype=np.int32).reshape(2, 3) + 10 * c.rank
    got = c.allgather(a)
    report(got.shape == (c.size, 2, 3) and all(
        np.array_equal(got[r], np.arange(6).reshape(2, 3) + 10 * r)
        for r in range(c.size)), "allgather 2-D shape and values")


def check_broadcast(c):
    for dt in DTYPES:
        for n in COUNTS + [100000]:
            for root in range(c.size):
                a = gen(dt, "bxor", c.rank, n)
                c.broadcast(a, root)
                report(same(a, gen(dt, "bxor", root, n)),
                       "broadcast %s n=%d root=%d" %
                       (np.dtype(dt).name, n, root))


def check_barrier(c):
    for _ in range(20):
        c.barrier()
    report(True, "20 barriers")


def expect_raise(exc, what, f):
    try:
        f()
    except exc:
        report(True, what)
        return
    except Exception as e:          # noqa: BLE001 - the wrong kind
        report(False, "%s: %s, want %s" % (what, type(e).__name__,
                                           exc.__name__))
        return
    report(False, what + ": no error")


def check_bad_input(c):
    # refused before anything reaches the fabric, identically on every rank
    a = np.ones(8, np.float32)
    expect_raise(TypeError, "float16 refused",
                 lambda: c.allreduce(np.ones(4, np.float16)))
    expect_raise(TypeError, "a list refused", lambda: c.allreduce([1, 2]))
    expect_raise(ValueError, "non-contiguous refused",
                 lambda: c.allreduce(np.ones(16, np.float32)[::2]))
    expect_raise(ValueError, "unknown op refused",
                 lambda: c.allreduce(a, op="avg"))
    expect_raise(ValueError, "out of another dtype refused",
                 lambda: c.allreduce(a, out=np.empty(8, np.float64)))
    expect_raise(ValueError, "broadcast root out of range refused",
                 lambda: c.broadcast(a, root=c.size))
    ro = np.ones(4, np.int32)
    ro.flags.writeable = False
    expect_raise(ValueError, "read-only broadcast buffer refused",
                 lambda: c.broadcast(ro))
    expect_raise(TypeError, "bool refused",
                 lambda: c.allreduce(np.ones(4, np.bool_)))
    expect_raise(weft.FabricError, "an unknown provider refused",
                 lambda: weft.Fabric("no-such-provider"))
    # numpy's other names for the same types work as well
    ll = np.arange(5, dtype=np.longlong)
    report(same(c.allreduce(ll), ll * c.size), "longlong allreduce")
    # and the communicator still works after them
    report(same(c.allreduce(np.ones(3, np.int32)),
                np.full(3, c.size, np.int32)), "allreduce after bad input")


def main():
    c = weft.init(timeout=120)
    steps = [check_allreduce, check_large, check_reproducible,
             check_allgather, check_broadcast, check_barrier,
             check_bad_input]
    for step in steps:
        try:
            step(c)
        except Exception:           # noqa: BLE001 - report, go on
            report(False, step.__name__ + " raised:\n" +
                   traceback.format_exc())
            break
    print("%s - rank %d of %d over %s: %d checks, %d failed" %
          ("not ok" if failures else "ok", c.rank, c.size, c.provider,
           checks, failures), flush=True)
    weft.finalize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
