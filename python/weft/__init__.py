# SPDX-License-Identifier: MIT
"""weft: collectives on numpy arrays over libfabric's fi_collective(3).

    import numpy as np, weft
    weft.init()                        # rank and size from the launcher
    grad = np.ones(1000, np.float32)
    weft.allreduce(grad, op="sum", out=grad)
    weft.finalize()

Launch with mpirun (Open MPI), or set RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT as torch.distributed does (see weft._bootstrap). The library is
libfabric.so.1 as the dynamic linker finds it (LD_LIBRARY_PATH=<prefix>/
lib/weft) or $WEFT_LIBFABRIC. The provider is the first that offers
FI_COLLECTIVE, or init(provider=...), or $WEFT_PROVIDER.

Results are those of fi_allreduce and friends: for floating point types,
bitwise identical on every rank, and reproducible for a fixed rank count
and algorithm (fi_coll(7) gives the order of the reduction).
"""
import os

import numpy as np

from . import _bootstrap
from ._bootstrap import BootstrapError
from ._fabric import Fabric
from ._fi import (FI_DOUBLE, FI_DOUBLE_COMPLEX, FI_FLOAT, FI_FLOAT_COMPLEX,
                  FI_INT8, FI_INT16, FI_INT32, FI_INT64, FI_UINT8, FI_UINT16,
                  FI_UINT32, FI_UINT64, OPS, FabricError)

__all__ = ["init", "finalize", "rank", "size", "provider", "allreduce",
           "allgather", "broadcast", "barrier", "Communicator", "Fabric",
           "FabricError", "BootstrapError"]
__version__ = "0.1.0"

# By kind and size, not by dtype object: equal dtypes of different names
# (np.longlong and np.int64) hash differently.
_DTYPES = {
    ("i", 1): FI_INT8, ("u", 1): FI_UINT8, ("i", 2): FI_INT16,
    ("u", 2): FI_UINT16, ("i", 4): FI_INT32, ("u", 4): FI_UINT32,
    ("i", 8): FI_INT64, ("u", 8): FI_UINT64, ("f", 4): FI_FLOAT,
    ("f", 8): FI_DOUBLE, ("c", 8): FI_FLOAT_COMPLEX,
    ("c", 16): FI_DOUBLE_COMPLEX,
}


def _fi_dtype(a):
    dt = _DTYPES.get((a.dtype.kind, a.dtype.itemsize)) \
        if a.dtype.isnative else None
    if dt is None:
        raise TypeError("weft: no libfabric datatype for numpy dtype %s "
                        "(native-endian integers, float32/64, complex64/128)"
                        % a.dtype)
    return dt


def _contiguous(a, what):
    if not isinstance(a, np.ndarray):
        raise TypeError("weft: %s must be a numpy array, not %s" %
                        (what, type(a).__name__))
    if not a.flags.c_contiguous:
        raise ValueError("weft: %s must be C-contiguous "
                         "(np.ascontiguousarray)" % what)
    return a


def _writable(a, what):
    _contiguous(a, what)
    if not a.flags.writeable:
        raise ValueError("weft: %s is read-only" % what)
    return a


class Communicator:
    """All ranks of the job, over one endpoint."""

    def __init__(self, provider=None, timeout=None):
        self.rank, self.size, self.launcher = _bootstrap.launcher()
        provider = provider or os.environ.get("WEFT_PROVIDER") or None
        self._fab = Fabric(provider, timeout)
        self.provider = self._fab.provider
        try:
            names = _bootstrap.exchange(self._fab.name(), self.rank,
                                        self.size, self.launcher)
            self._fab.join(names, self.rank)
        except BaseException:
            self.close()
            raise

    def close(self):
        if self._fab:
            self._fab.close()
            self._fab = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _ready(self):
        if not self._fab:
            raise RuntimeError("weft: the communicator is closed")
        return self._fab

    def barrier(self):
        self._ready().barrier()

    def allreduce(self, a, op="sum", out=None):
        """The element-wise reduction of a over all ranks (op: sum, prod,
        min, max, band, bor, bxor, land, lor, lxor), into out (a new array
        when None; out may be a itself)."""
        fab = self._ready()
        _contiguous(a, "the input")
        if op not in OPS:
            raise ValueError("weft: op %r is none of %s" %
                             (op, ", ".join(sorted(OPS))))
        dt = _fi_dtype(a)
        if out is None:
            out = np.empty_like(a)
        _writable(out, "out")
        if out.dtype != a.dtype or out.size != a.size:
            raise ValueError("weft: out must have the input's dtype and size")
        fab.allreduce(a.ctypes.data, out.ctypes.data, a.size, dt, OPS[op])
        return out

    def allgather(self, a, out=None):
        """Every rank's a, stacked in rank order: shape (size,) + a.shape."""
        fab = self._ready()
        _contiguous(a, "the input")
        dt = _fi_dtype(a)
        if out is None:
            out = np.empty((self.size,) + a.shape, a.dtype)
        _writable(out, "out")
        if out.dtype != a.dtype or out.size != a.size * self.size:
            raise ValueError("weft: out must have the input's dtype and "
                             "size x %d elements" % self.size)
        fab.allgather(a.ctypes.data, out.ctypes.data, a.size, dt)
        return out

    def broadcast(self, a, root=0):
        """root's a into every rank's a (in place); returns a."""
        fab = self._ready()
        _writable(a, "the array")
        if not 0 <= root < self.size:
            raise ValueError("weft: root %d is not a rank of %d" %
                             (root, self.size))
        dt = _fi_dtype(a)
        fab.broadcast(a.ctypes.data, a.size, dt, root)
        return a


# ---- the module-level default communicator -----------------------------------

_world = None


def init(provider=None, timeout=None):
    """Start the default communicator (once); returns it."""
    global _world
    if _world is None:
        _world = Communicator(provider, timeout)
    return _world


def _w():
    if _world is None:
        raise RuntimeError("weft: call weft.init() first")
    return _world


def finalize():
    global _world
    if _world is not None:
        _world.close()
        _world = None


def rank():
    return _w().rank


def size():
    return _w().size


def provider():
    return _w().provider


def barrier():
    _w().barrier()


def allreduce(a, op="sum", out=None):
    return _w().allreduce(a, op, out)


def allgather(a, out=None):
    return _w().allgather(a, out)


def broadcast(a, root=0):
    return _w().broadcast(a, root)
