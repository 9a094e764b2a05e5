# SPDX-License-Identifier: MIT
"""weft as a torch.distributed backend ("weft"), over fi_collective(3).

    import torch.distributed as dist
    import weft.c10d                      # registers the backend "weft"
    dist.init_process_group("weft", rank=r, world_size=n)   # or env://
    dist.all_reduce(t)                    # t: a CPU tensor

A Python subclass of torch's ProcessGroup: torch 1.13's libtorch_python
binds ProcessGroup through a pybind11 trampoline (PyProcessGroup), so its
C++ callers (DistributedDataParallel's reducer, _broadcast_coalesced,
_verify_params_across_processes) reach these methods as well as
torch.distributed's Python functions do; nothing is compiled.

Each process group opens its own endpoint and joins one libfabric group of
its members; the endpoint names go through the group's store (the one
init_process_group made). Tensors are handed to the fabric by their data
pointers, without a copy, when they are contiguous CPU tensors (and, for
all_gather and reduce_scatter, when torch hands one flat tensor: the _base
variants); otherwise through a contiguous staging tensor copied back on
completion.

Operations are posted without waiting (the C engine progresses them
whenever the endpoint's CQ is read). A returned work's wait() reads the CQ
until its own completion; is_completed() polls once; get_future() waits,
then hands a completed future (what DistributedDataParallel's reducer
waits on from C++, where no Python code could progress it). Between
those, a thread per group reads the CQ every WEFT_TORCH_PROGRESS_MS (see
_progress_loop). Errors (a member died, the group's
timeout) raise from wait() as RuntimeError naming the libfabric error.
"""
import atexit
import os
import threading
import weakref
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup

from ._fabric import Fabric
from ._fi import (FI_DOUBLE, FI_DOUBLE_COMPLEX, FI_FLOAT, FI_FLOAT_COMPLEX,
                  FI_INT8, FI_INT16, FI_INT32, FI_INT64, FI_UINT8, OPS,
                  FabricError)

BACKEND = "weft"

_DTYPES = {
    torch.int8: FI_INT8, torch.uint8: FI_UINT8, torch.int16: FI_INT16,
    torch.int32: FI_INT32, torch.int64: FI_INT64, torch.float32: FI_FLOAT,
    torch.float64: FI_DOUBLE, torch.complex64: FI_FLOAT_COMPLEX,
    torch.complex128: FI_DOUBLE_COMPLEX,
}

# torch's reduce ops by name (ReduceOp.op is a RedOpType); AVG and
# PREMUL_SUM have no libfabric op and are refused.
_OPS = {"SUM": "sum", "PRODUCT": "prod", "MIN": "min", "MAX": "max",
        "BAND": "band", "BOR": "bor", "BXOR": "bxor"}


def _fi_dtype(t):
    dt = _DTYPES.get(t.dtype)
    if dt is None:
        raise TypeError("weft: no libfabric datatype for %s (int8, uint8, "
                        "int16/32/64, float32/64, complex64/128)" % t.dtype)
    return dt


def _fi_op(reduce_op):
    name = getattr(getattr(reduce_op, "op", reduce_op), "name", None)
    if name not in _OPS:
        raise ValueError("weft: reduce op %s is none of %s" %
                         (name, ", ".join(_OPS)))
    return OPS[_OPS[name]]


def _cpu(t, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError("weft: %s must be a tensor, not %s" %
                        (what, type(t).__name__))
    if t.device.type != "cpu":
        raise ValueError("weft: %s is on %s; the weft backend takes CPU "
                         "tensors" % (what, t.device))
    if t.is_sparse:
        raise ValueError("weft: %s is sparse" % what)
    return t


def _one(tensors, what):
    if len(tensors) != 1:
        raise ValueError("weft: %s takes one tensor per process, not %d" %
                         (what, len(tensors)))
    return _cpu(tensors[0], what)


def _dense(t):
    """(t itself or a contiguous copy, copy-back step or None)."""
    if t.is_contiguous():
        return t, None
    c = t.contiguous()
    return c, lambda: t.copy_(c)


class Work(dist.Work):
    """One posted collective. wait() progresses the endpoint until this
    collective completes, then runs its copy-back step (staged outputs)."""

    def __init__(self, pg, op, result, finish=None):
        super().__init__()
        self._pg = pg
        self._op = op
        self._result = result       # what result() and the future hold
        self._finish = finish
        self._settled = False
        self._error = None
        # A C++ caller (DDP's reducer, _broadcast_coalesced) holds only the
        # C++ half of this object: were the Python half freed, its wait()
        # would be torch's own, which blocks for good. So the group keeps
        # it until it has been waited for.
        pg._live.add(self)

    def _complete(self):
        if not self._settled:
            try:
                self._pg._fab_wait(self._op)
                if self._finish is not None:
                    self._finish()
            except FabricError as e:
                self._error = e
            self._settled = True
            self._finish = None
            self._pg._live.discard(self)
        if self._error is not None:
            raise RuntimeError("weft: %s" % self._error) from self._error

    def wait(self, timeout=timedelta(0)):
        # torch's timeout argument (0: the group's) is not finer than the
        # group's own, which the fabric enforces.
        self._complete()
        return True

    def is_completed(self):
        if not self._op.done:
            self._pg._poll()
        return self._op.done

    def is_success(self):
        return self._op.done and self._op.err is None

    def exception(self):
        return self._op.err

    def result(self):
        self._complete()
        return self._result

    def source_rank(self):
        raise RuntimeError("weft: source_rank is for point-to-point work")

    def synchronize(self):
        self._complete()

    def get_future(self):
        self._complete()
        fut = torch.futures.Future()
        fut.set_result(self._result)
        return fut


class ProcessGroupWeft(ProcessGroup):
    """A torch ProcessGroup over one weft endpoint and its group."""

    def __init__(self, store, rank, size, timeout, provider=None):
        super().__init__(rank, size)
        interval = _progress_interval()
        secs = timeout.total_seconds() if timeout else None
        self._lock = threading.RLock()
        self._live = set()      # works posted and not yet waited for
        self._fab = Fabric(provider, secs)
        self.provider = self._fab.provider
        try:
            store.set("weft/name/%d" % rank, self._fab.name())
            names = [bytes(store.get("weft/name/%d" % r))
                     for r in range(size)]
            self._fab.join(names, rank)
        except BaseException:
            self._fab.close()
            raise
        self._stop = threading.Event()
        self._thread = None
        if interval:
            self._thread = threading.Thread(
                target=_progress_loop, args=(weakref.ref(self), self._stop,
                                             interval),
                name="weft-progress", daemon=True)
            self._thread.start()
            _groups.add(self)

    def _progress_once(self):
        if self._lock.acquire(blocking=False):
            try:
                if self._fab is not None:
                    self._fab.poll()
            except FabricError:
                pass        # the operation's own wait() reports it
            finally:
                self._lock.release()

    # ---- plumbing ----------------------------------------------------------

    def getBackendName(self):
        return BACKEND

    def _get_backend_name(self):
        return BACKEND

    def name(self):
        return BACKEND

    def _poll(self):
        with self._lock:
            self._fab.poll()

    def _fab_wait(self, op):
        with self._lock:
            self._fab.wait(op)

    def _post(self, start, result, finish=None, keep=()):
        """start(): posts through self._fab and returns the Op."""
        with self._lock:
            op = start()
            op.keep = keep
        return Work(self, op, result, finish)

    def shutdown(self):
        """Wait for what is in flight, then close the endpoint."""
        self._stop.set()
        if self._thread is not None and \
                self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            if self._fab is not None:
                try:
                    self._fab.drain()
                finally:
                    self._live.clear()
                    self._fab.close()
                    self._fab = None

    def __del__(self):
        try:
            self.shutdown()
        except Exception:
            pass

    # ---- collectives ---------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        t = _one(tensors, "all_reduce")
        dt = _fi_dtype(t)
        op = _fi_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        d, back = _dense(t)
        p = d.data_ptr()
        return self._post(lambda: self._fab.iallreduce(
            p, p, d.numel(), dt, op), tensors, back, (d,))

    def broadcast(self, tensors, opts=None):
        t = _one(tensors, "broadcast")
        dt = _fi_dtype(t)
        root = opts.rootRank if opts is not None else 0
        if not 0 <= root < self.size():
            raise ValueError("weft: broadcast root %d of %d ranks" %
                             (root, self.size()))
        d, back = _dense(t)
        p = d.data_ptr()
        return self._post(lambda: self._fab.ibroadcast(
            p, d.numel(), dt, root), tensors, back, (d,))

    def allgather(self, output_tensors, input_tensors, opts=None):
        t = _one(input_tensors, "all_gather")
        if len(output_tensors) != 1 or \
                len(output_tensors[0]) != self.size():
            raise ValueError("weft: all_gather needs one list of %d output "
                             "tensors" % self.size())
        outs = output_tensors[0]
        for o in outs:
            _cpu(o, "an all_gather output")
            if o.dtype != t.dtype or o.numel() != t.numel():
                raise ValueError("weft: all_gather outputs must have the "
                                 "input's dtype and size")
        dt = _fi_dtype(t)
        src, _ = _dense(t)
        flat = torch.empty((self.size(), t.numel()), dtype=t.dtype)

        def back():
            for i, o in enumerate(outs):
                o.copy_(flat[i].view(o.shape))
        sp, fp = src.data_ptr(), flat.data_ptr()
        return self._post(lambda: self._fab.iallgather(
            sp, fp, t.numel(), dt), output_tensors, back, (src, flat))

    def _allgather_base(self, output, input, opts=None):
        _cpu(input, "all_gather_into_tensor's input")
        _cpu(output, "all_gather_into_tensor's output")
        if output.dtype != input.dtype or \
                output.numel() != input.numel() * self.size():
            raise ValueError("weft: the output must have the input's dtype "
                             "and %d times its size" % self.size())
        dt = _fi_dtype(input)
        src, _ = _dense(input)
        dst, back = _dense(output)
        sp, dp = src.data_ptr(), dst.data_ptr()
        return self._post(lambda: self._fab.iallgather(
            sp, dp, input.numel(), dt), [output], back, (src, dst))

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        out = _one(output_tensors, "reduce_scatter")
        if len(input_tensors) != 1 or len(input_tensors[0]) != self.size():
            raise ValueError("weft: reduce_scatter needs one list of %d "
                             "input tensors" % self.size())
        ins = input_tensors[0]
        for i in ins:
            _cpu(i, "a reduce_scatter input")
            if i.dtype != out.dtype or i.numel() != out.numel():
                raise ValueError("weft: reduce_scatter inputs must have the "
                                 "output's dtype and size")
        dt = _fi_dtype(out)
        op = _fi_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        flat = torch.stack([i.reshape(-1) for i in ins]) if out.numel() \
            else torch.empty(0, dtype=out.dtype)
        dst, back = _dense(out)
        fp, dp = flat.data_ptr(), dst.data_ptr()
        return self._post(lambda: self._fab.ireduce_scatter(
            fp, dp, out.numel(), dt, op), output_tensors, back, (flat, dst))

    def _reduce_scatter_base(self, output, input, opts=None):
        _cpu(input, "reduce_scatter_tensor's input")
        _cpu(output, "reduce_scatter_tensor's output")
        if output.dtype != input.dtype or \
                input.numel() != output.numel() * self.size():
            raise ValueError("weft: the input must have the output's dtype "
                             "and %d times its size" % self.size())
        dt = _fi_dtype(output)
        op = _fi_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        src, _ = _dense(input)
        dst, back = _dense(output)
        sp, dp = src.data_ptr(), dst.data_ptr()
        return self._post(lambda: self._fab.ireduce_scatter(
            sp, dp, output.numel(), dt, op), [output], back, (src, dst))

    def barrier(self, opts=None):
        return self._post(self._fab.ibarrier, [])


def _progress_loop(ref, stop, interval):
    """The progress thread: reads the group's CQ every interval while
    nobody else does. weft's progress is manual: a rank whose collective
    has completed may still owe its peers progress (over tcp a peer's
    collective stalled until this rank entered weft again), and between
    collectives a torch program may sit in another backend or in compute
    for long. Holds the group weakly, so dropping the group ends it."""
    while not stop.wait(interval):
        pg = ref()
        if pg is None:
            return
        pg._progress_once()
        del pg


_groups = weakref.WeakSet()     # groups with a progress thread


@atexit.register
def _stop_threads():
    # before the interpreter (and the library) goes away under a thread
    # that is inside fi_cq_read
    for pg in list(_groups):
        pg._stop.set()
        if pg._thread is not None:
            pg._thread.join()


def _progress_interval():
    """$WEFT_TORCH_PROGRESS_MS (default 1; 0: no progress thread)."""
    v = os.environ.get("WEFT_TORCH_PROGRESS_MS", "1")
    try:
        ms = float(v)
    except ValueError:
        raise ValueError("weft: WEFT_TORCH_PROGRESS_MS=%r is not a number of "
                         "milliseconds" % v) from None
    if ms < 0:
        raise ValueError("weft: WEFT_TORCH_PROGRESS_MS=%r is negative" % v)
    return ms / 1000.0


def create(store, rank, size, timeout):
    """The creator torch.distributed calls for init_process_group("weft")
    and new_group(backend="weft"). The provider is $WEFT_PROVIDER, else the
    first that offers FI_COLLECTIVE."""
    return ProcessGroupWeft(store, rank, size, timeout,
                            os.environ.get("WEFT_PROVIDER") or None)


def register():
    """Register the backend (done on import; safe to call again)."""
    if BACKEND.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND, create)


register()
