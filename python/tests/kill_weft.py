# SPDX-License-Identifier: MIT
"""A rank killed in the middle of an allreduce: the last rank posts its part
of a 4 MiB allreduce (so a pipelined ring is in flight) and SIGKILLs
itself; every other rank must get weft.FabricError from that allreduce or
the next one within BOUND seconds, and then an error at once from a later
one, instead of hanging. Prints "ok - ..." per surviving rank.
"""
import ctypes
import os
import signal
import sys
import time

import numpy as np

import weft

BOUND = 15.0
N = 1 << 20         # float32: 4 MiB


def main():
    c = weft.init()
    me, n = c.rank, c.size
    a = np.full(N, me + 1, np.float32)
    for _ in range(3):                  # healthy first
        r = c.allreduce(a)
        if r[0] != n * (n + 1) / 2 or r[-1] != r[0]:
            print("not ok - rank %d: healthy allreduce gave %r" % (me, r[0]))
            return 1
    if me == n - 1:
        # post only, the way an application dies with work in flight
        fab = c._fab
        out = np.empty_like(a)
        ctx = ctypes.c_int(0)
        ret = fab._allreduce(fab.ep, a.ctypes.data, N, None, out.ctypes.data,
                             None, fab.coll_addr, weft.FI_FLOAT,
                             weft._fi.OPS["sum"], 0, ctypes.addressof(ctx))
        if ret:
            print("not ok - rank %d: posting the last allreduce: %d" %
                  (me, ret))
        os.kill(os.getpid(), signal.SIGKILL)
    t0 = time.monotonic()
    err = None
    for _ in range(2):                  # that one, or the next
        try:
            c.allreduce(a)
        except weft.FabricError as e:
            err = e
            break
    took = time.monotonic() - t0
    if err is None or took > BOUND:
        print("not ok - rank %d: %s after %.1f s" %
              (me, "no error" if err is None else "error", took))
        return 1
    t1 = time.monotonic()
    try:
        c.allreduce(a)
        print("not ok - rank %d: an allreduce of the failed group "
              "succeeded" % me)
        return 1
    except weft.FabricError:
        pass
    print("ok - rank %d: FabricError after %.2f s (%s), the next one after "
          "%.3f s" % (me, took, err, time.monotonic() - t1))
    weft.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
