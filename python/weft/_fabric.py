# SPDX-License-Identifier: MIT
"""One RDM endpoint with FI_COLLECTIVE, its AV and the group of all ranks.

The calls are the C sequence of fi_collective(3): fi_getinfo with
FI_COLLECTIVE, fabric, domain, CQ, AV, EQ, endpoint (bound to all three),
the ranks' names into the AV in rank order, an AV set of all of them,
fi_join_collective and its FI_JOIN_COMPLETE event; then each collective
is posted and waited for on the CQ.
"""
import ctypes
import time
from ctypes import byref, c_size_t, c_uint32, c_uint64, c_void_p

from . import _fi
from ._fi import FabricError, check, fn, ops_of

NAME_MAX = 256
POLL_BATCH = 16


class Op:
    """One posted operation: done once its completion is read; err is the
    FabricError of an error completion."""
    __slots__ = ("what", "ctx", "keep", "done", "err")

    def __init__(self, what, keep):
        self.what = what
        self.ctx = ctypes.c_int(0)      # its address is the op's context
        self.keep = keep
        self.done = False
        self.err = None


class Fabric:
    def __init__(self, provider=None, timeout=None):
        """provider: a provider name ("shm", "srd"), or None for the first
        that offers FI_COLLECTIVE. timeout: seconds a join or collective
        may take before FabricError (None: no limit)."""
        self.timeout = timeout
        self._objs = []         # (address, what) to close, in open order
        self._ops = {}          # context address -> Op in flight
        self._comps = (c_void_p * POLL_BATCH)()
        self.info = None
        try:
            self._open(provider)
        except BaseException:
            self.close()
            raise

    # ---- opening -----------------------------------------------------------

    def _getinfo(self, provider):
        lib = _fi.lib()
        hints = lib.fi_dupinfo(None)
        if not hints:
            raise FabricError(-12, "fi_dupinfo")            # FI_ENOMEM
        h = hints.contents
        h.caps = _fi.FI_COLLECTIVE | _fi.FI_MSG
        h.ep_attr.contents.type = _fi.FI_EP_RDM
        if provider:
            h.fabric_attr.contents.prov_name = _fi.strdup(provider)
        info = ctypes.POINTER(_fi.fi_info)()
        ret = lib.fi_getinfo(_fi.FI_VERSION_1_17, None, None, 0, hints,
                             byref(info))
        lib.fi_freeinfo(hints)
        if ret == -61:                                       # FI_ENODATA
            raise FabricError(ret, "no provider%s offers FI_COLLECTIVE "
                              "(is weft's libfabric.so.1 the one loaded? "
                              "set LD_LIBRARY_PATH=<prefix>/lib/weft or "
                              "WEFT_LIBFABRIC)" %
                              (" named %r" % provider if provider else ""))
        check(ret, "fi_getinfo")
        self.info = info
        name = ctypes.cast(info.contents.fabric_attr.contents.prov_name,
                           ctypes.c_char_p).value
        self.provider = name.decode() if name else "?"

    def _keep(self, addr, what):
        self._objs.append((addr, what))
        return addr

    def _open(self, provider):
        self._getinfo(provider)
        lib = _fi.lib()
        info = self.info
        fabric = c_void_p()
        check(lib.fi_fabric(info.contents.fabric_attr, byref(fabric), None),
              "fi_fabric")
        self.fabric = self._keep(fabric.value, "fabric")
        fops = ops_of(self.fabric, _fi.fid_fabric, _fi.fi_ops_fabric)

        dom = c_void_p()
        check(fn(fops, "domain", _fi.T_DOMAIN)(
            self.fabric, ctypes.cast(info, c_void_p), byref(dom), None),
            "fi_domain")
        self.domain = self._keep(dom.value, "domain")
        dops = ops_of(self.domain, _fi.fid_domain, _fi.fi_ops_domain)

        cq_attr = _fi.fi_cq_attr(format=_fi.FI_CQ_FORMAT_CONTEXT)
        cq = c_void_p()
        check(fn(dops, "cq_open", _fi.T_OPEN)(
            self.domain, ctypes.addressof(cq_attr), byref(cq), None),
            "fi_cq_open")
        self.cq = self._keep(cq.value, "cq")
        av_attr = _fi.fi_av_attr(type=_fi.FI_AV_TABLE)
        av = c_void_p()
        check(fn(dops, "av_open", _fi.T_OPEN)(
            self.domain, ctypes.addressof(av_attr), byref(av), None),
            "fi_av_open")
        self.av = self._keep(av.value, "av")
        eq_attr = _fi.fi_eq_attr(wait_obj=_fi.FI_WAIT_NONE)
        eq = c_void_p()
        check(fn(fops, "eq_open", _fi.T_EQ_OPEN)(
            self.fabric, ctypes.addressof(eq_attr), byref(eq), None),
            "fi_eq_open")
        self.eq = self._keep(eq.value, "eq")
        ep = c_void_p()
        check(fn(dops, "endpoint", _fi.T_OPEN)(
            self.domain, ctypes.cast(info, c_void_p), byref(ep), None),
            "fi_endpoint")
        self.ep = self._keep(ep.value, "ep")
        self._bind(self.av, 0)
        self._bind(self.cq, _fi.FI_TRANSMIT | _fi.FI_RECV)
        self._bind(self.eq, 0)
        epops = ops_of(self.ep, _fi.fid, _fi.fi_ops)
        check(fn(epops, "control", _fi.T_CONTROL)(self.ep, _fi.FI_ENABLE,
                                                   None), "fi_enable")
        self._cache_ops()

    def _bind(self, obj, flags):
        epops = ops_of(self.ep, _fi.fid, _fi.fi_ops)
        check(fn(epops, "bind", _fi.T_BIND)(self.ep, obj, flags),
              "fi_ep_bind")

    def _cache_ops(self):
        ep = _fi.fid_ep.from_address(self.ep)
        if not ep.collective:
            raise FabricError(-78, "the endpoint has no collective ops")
        coll = _fi.fi_ops_collective.from_address(ep.collective)
        self._barrier = fn(coll, "barrier", _fi.T_BARRIER)
        self._broadcast = fn(coll, "broadcast", _fi.T_BROADCAST)
        self._allreduce = fn(coll, "allreduce", _fi.T_ALLREDUCE)
        self._allgather = fn(coll, "allgather", _fi.T_ALLGATHER)
        self._reduce_scatter = fn(coll, "reduce_scatter",
                                  _fi.T_REDUCE_SCATTER)
        self._cm = _fi.fi_ops_cm.from_address(ep.cm)
        cqops = ops_of(self.cq, _fi.fid_ops1, _fi.fi_ops_cq)
        self._cq_read = fn(cqops, "read", _fi.T_CQ_READ)
        self._cq_readerr = fn(cqops, "readerr", _fi.T_CQ_READERR)
        eqops = ops_of(self.eq, _fi.fid_ops1, _fi.fi_ops_eq)
        self._eq_read = fn(eqops, "read", _fi.T_EQ_READ)
        self._eq_readerr = fn(eqops, "readerr", _fi.T_EQ_READERR)

    # ---- names, the AV, the group --------------------------------------------

    def name(self):
        """This endpoint's address, to hand to the other ranks."""
        buf = ctypes.create_string_buffer(NAME_MAX)
        length = c_size_t(NAME_MAX)
        check(fn(self._cm, "getname", _fi.T_GETNAME)(
            self.ep, buf, byref(length)), "fi_getname")
        return buf.raw[:length.value]

    def join(self, names, rank):
        """Insert every rank's name (rank order) and join the group of all
        of them; rank is this process's index in names."""
        if names[rank] != self.name():
            raise ValueError("names[%d] is not this endpoint's name" % rank)
        avops = ops_of(self.av, _fi.fid_ops1, _fi.fi_ops_av)
        insert = fn(avops, "insert", _fi.T_AV_INSERT)
        self.addrs = []
        for i, nm in enumerate(names):
            a = c_uint64()
            ret = insert(self.av, nm, 1, byref(a), 0, None)
            if ret != 1:
                raise FabricError(ret if ret < 0 else -5,
                                  "fi_av_insert of rank %d" % i)
            self.addrs.append(a.value)
        attr = _fi.fi_av_set_attr(count=len(names),
                                  start_addr=_fi.FI_ADDR_NOTAVAIL,
                                  end_addr=_fi.FI_ADDR_NOTAVAIL)
        sset = c_void_p()
        check(fn(avops, "av_set", _fi.T_AV_SET)(
            self.av, ctypes.addressof(attr), byref(sset), None), "fi_av_set")
        self.set = self._keep(sset.value, "av_set")
        sops = ops_of(self.set, _fi.fid_ops1, _fi.fi_ops_av_set)
        for a in self.addrs:
            check(fn(sops, "insert", _fi.T_SET_INSERT)(self.set, a),
                  "fi_av_set_insert")
        set_addr = c_uint64()
        check(fn(sops, "addr", _fi.T_SET_ADDR)(self.set, byref(set_addr)),
              "fi_av_set_addr")
        caddr = _fi.fi_collective_addr(set=self.set,
                                       coll_addr=set_addr.value)
        mc = c_void_p()
        ctx = ctypes.c_int(0)
        check(fn(self._cm, "join", _fi.T_JOIN)(
            self.ep, ctypes.addressof(caddr), _fi.FI_COLLECTIVE, byref(mc),
            ctypes.addressof(ctx)), "fi_join_collective")
        self.mc = self._keep(mc.value, "mc")
        self._wait_join(ctypes.addressof(ctx))
        self.coll_addr = _fi.fid_mc.from_address(self.mc).fi_addr

    def _wait_join(self, ctx):
        event = c_uint32()
        entry = _fi.fi_eq_entry()
        deadline = self._deadline()
        while True:
            rd = self._eq_read(self.eq, byref(event), ctypes.addressof(entry),
                               ctypes.sizeof(entry), 0)
            if rd == -_fi.FI_EAVAIL:
                err = _fi.fi_eq_err_entry()
                self._eq_readerr(self.eq, ctypes.addressof(err), 0)
                raise FabricError(-err.err, "fi_join_collective")
            if rd > 0:
                if event.value != _fi.FI_JOIN_COMPLETE or \
                        entry.context != ctx:
                    raise FabricError(-5, "EQ event %d, not the join's" %
                                      event.value)
                return
            if rd != -_fi.FI_EAGAIN:
                check(rd, "fi_eq_read")
            self._progress()
            self._check_deadline(deadline, "fi_join_collective")

    # ---- operations --------------------------------------------------------

    def _deadline(self):
        return None if self.timeout is None else \
            time.monotonic() + self.timeout

    def _check_deadline(self, deadline, what):
        if deadline is not None and time.monotonic() > deadline:
            raise FabricError(-110, "%s: no completion in %g s" %
                              (what, self.timeout))         # FI_ETIMEDOUT

    def _progress(self):
        """Drive progress (a CQ read) without taking a completion."""
        self._cq_read(self.cq, None, 0)

    def post(self, what, post, keep=None):
        """Post an operation without waiting for it: post(ctx) returns the
        fi_* call's result (retried on -FI_EAGAIN, progressing meanwhile).
        keep: objects that must live until the completion (the buffers).
        Returns the Op, which poll() marks done when its completion (or
        error completion) is read."""
        op = Op(what, keep)
        cp = ctypes.addressof(op.ctx)
        deadline = self._deadline()
        while True:
            ret = post(cp)
            if ret != -_fi.FI_EAGAIN:
                check(ret, what)
                break
            self.poll()
            self._check_deadline(deadline, what)
        self._ops[cp] = op
        return op

    def poll(self):
        """Read what the CQ holds (this is also what drives the provider's
        progress) and mark those operations done; returns how many."""
        n = self._cq_read(self.cq, self._comps, POLL_BATCH)
        if n > 0:
            for i in range(n):
                self._done(self._comps[i], None)
            return n
        if n == -_fi.FI_EAVAIL:
            err = _fi.fi_cq_err_entry()
            self._cq_readerr(self.cq, ctypes.addressof(err), 0)
            self._done(err.op_context, -err.err)
            return 1
        if n != -_fi.FI_EAGAIN:
            check(n, "fi_cq_read")
        return 0

    def _done(self, ctx, errno):
        op = self._ops.pop(ctx, None)
        if op is None:
            raise FabricError(-5, "a completion for no operation posted "
                              "here (context 0x%x)" % (ctx or 0))
        if errno is not None:
            op.err = FabricError(errno, op.what)
        op.done = True
        op.keep = None

    def wait(self, op):
        """Progress until op completes; raises its FabricError if it
        failed, or FI_ETIMEDOUT after the Fabric's timeout."""
        deadline = self._deadline()
        while not op.done:
            if not self.poll():
                self._check_deadline(deadline, op.what)
        if op.err is not None:
            raise op.err

    def in_flight(self):
        return len(self._ops)

    def run(self, what, post):
        """Post an operation and wait for its completion."""
        self.wait(self.post(what, post))

    # Each collective twice: i<name> posts it and returns its Op (keep:
    # what must outlive it), <name> waits for it.

    def ibarrier(self, keep=None):
        return self.post("fi_barrier", lambda cp: self._barrier(
            self.ep, self.coll_addr, cp), keep)

    def ibroadcast(self, buf, count, dt, root, keep=None):
        return self.post("fi_broadcast", lambda cp: self._broadcast(
            self.ep, buf, count, None, self.coll_addr, self.addrs[root], dt,
            0, cp), keep)

    def iallreduce(self, src, dst, count, dt, op, keep=None):
        return self.post("fi_allreduce", lambda cp: self._allreduce(
            self.ep, src, count, None, dst, None, self.coll_addr, dt, op, 0,
            cp), keep)

    def iallgather(self, src, dst, count, dt, keep=None):
        return self.post("fi_allgather", lambda cp: self._allgather(
            self.ep, src, count, None, dst, None, self.coll_addr, dt, 0, cp),
            keep)

    def ireduce_scatter(self, src, dst, count, dt, op, keep=None):
        """src: members x count elements; dst: this member's count."""
        return self.post("fi_reduce_scatter", lambda cp: self._reduce_scatter(
            self.ep, src, count, None, dst, None, self.coll_addr, dt, op, 0,
            cp), keep)

    def barrier(self):
        self.wait(self.ibarrier())

    def broadcast(self, buf, count, dt, root):
        self.wait(self.ibroadcast(buf, count, dt, root))

    def allreduce(self, src, dst, count, dt, op):
        self.wait(self.iallreduce(src, dst, count, dt, op))

    def allgather(self, src, dst, count, dt):
        self.wait(self.iallgather(src, dst, count, dt))

    def drain(self):
        """Wait for every operation in flight (errors are theirs to
        report: the Ops hold them)."""
        deadline = self._deadline()
        while self._ops:
            if not self.poll():
                self._check_deadline(deadline, "draining")

    # ---- closing -------------------------------------------------------------

    def close(self):
        """Close everything opened, newest first (the group before the AV
        set, the endpoint before what it is bound to)."""
        while self._objs:
            addr, what = self._objs.pop()
            ops = ops_of(addr, _fi.fid, _fi.fi_ops)
            ret = fn(ops, "close", _fi.T_CLOSE)(addr)
            if ret:
                raise FabricError(ret, "fi_close(%s)" % what)
        if self.info:
            _fi.lib().fi_freeinfo(self.info)
            self.info = None
