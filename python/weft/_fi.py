# SPDX-License-Identifier: MIT
"""The libfabric 1.17 ABI as ctypes sees it.

libfabric exports a handful of symbols (fi_getinfo, fi_dupinfo, fi_fabric,
fi_freeinfo, fi_strerror, ...); every other call of its API is a header
inline that reads a function pointer from the object's ops table. So this
module mirrors the structs those inlines read (layouts and constants from
the 1.17 headers, which are the ABI every libfabric.so.1 keeps) and calls
the pointers the same way.
"""
import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_int,
                    c_size_t, c_ssize_t, c_uint32, c_uint64, c_void_p)

# ---- constants (rdma/fabric.h, fi_domain.h, fi_eq.h, fi_errno.h) ----------

FI_VERSION_1_17 = (1 << 16) | 17
FI_MSG = 1 << 1
FI_COLLECTIVE = 1 << 6
FI_RECV = 1 << 10
FI_TRANSMIT = 1 << 11
FI_EP_RDM = 3
FI_AV_TABLE = 2
FI_CQ_FORMAT_CONTEXT = 1
FI_WAIT_NONE = 0
FI_ENABLE = 6           # fi_control command
FI_JOIN_COMPLETE = 6    # EQ event
FI_ADDR_NOTAVAIL = (1 << 64) - 1

FI_EAGAIN = 11
FI_EAVAIL = 259

# enum fi_datatype
FI_INT8, FI_UINT8, FI_INT16, FI_UINT16, FI_INT32, FI_UINT32 = range(6)
FI_INT64, FI_UINT64, FI_FLOAT, FI_DOUBLE = 6, 7, 8, 9
FI_FLOAT_COMPLEX, FI_DOUBLE_COMPLEX, FI_LONG_DOUBLE = 10, 11, 12

# enum fi_op
OPS = {
    "min": 0, "max": 1, "sum": 2, "prod": 3, "lor": 4, "land": 5,
    "bor": 6, "band": 7, "lxor": 8, "bxor": 9,
}

# ---- structs ---------------------------------------------------------------


class fid(Structure):
    _fields_ = [("fclass", c_size_t), ("context", c_void_p),
                ("ops", c_void_p)]


class fi_ops(Structure):
    _fields_ = [("size", c_size_t), ("close", c_void_p), ("bind", c_void_p),
                ("control", c_void_p), ("ops_open", c_void_p),
                ("tostr", c_void_p), ("ops_set", c_void_p)]


class fi_fabric_attr(Structure):
    _fields_ = [("fabric", c_void_p), ("name", c_void_p),
                ("prov_name", c_void_p), ("prov_version", c_uint32),
                ("api_version", c_uint32)]


class fi_ep_attr(Structure):
    _fields_ = [("type", c_int), ("protocol", c_uint32),
                ("protocol_version", c_uint32)]   # leading fields only


class fi_info(Structure):
    _fields_ = [("next", c_void_p), ("caps", c_uint64), ("mode", c_uint64),
                ("addr_format", c_uint32), ("src_addrlen", c_size_t),
                ("dest_addrlen", c_size_t), ("src_addr", c_void_p),
                ("dest_addr", c_void_p), ("handle", c_void_p),
                ("tx_attr", c_void_p), ("rx_attr", c_void_p),
                ("ep_attr", POINTER(fi_ep_attr)),
                ("domain_attr", c_void_p),
                ("fabric_attr", POINTER(fi_fabric_attr)),
                ("nic", c_void_p)]


class fid_fabric(Structure):
    _fields_ = [("fid", fid), ("ops", c_void_p), ("api_version", c_uint32)]


class fi_ops_fabric(Structure):
    _fields_ = [("size", c_size_t), ("domain", c_void_p),
                ("passive_ep", c_void_p), ("eq_open", c_void_p),
                ("wait_open", c_void_p), ("trywait", c_void_p),
                ("domain2", c_void_p)]


class fid_domain(Structure):
    _fields_ = [("fid", fid), ("ops", c_void_p), ("mr", c_void_p)]


class fi_ops_domain(Structure):
    _fields_ = [("size", c_size_t), ("av_open", c_void_p),
                ("cq_open", c_void_p), ("endpoint", c_void_p),
                ("scalable_ep", c_void_p), ("cntr_open", c_void_p),
                ("poll_open", c_void_p), ("stx_ctx", c_void_p),
                ("srx_ctx", c_void_p), ("query_atomic", c_void_p),
                ("query_collective", c_void_p), ("endpoint2", c_void_p)]


class fi_av_attr(Structure):
    _fields_ = [("type", c_int), ("rx_ctx_bits", c_int), ("count", c_size_t),
                ("ep_per_node", c_size_t), ("name", c_char_p),
                ("map_addr", c_void_p), ("flags", c_uint64)]


class fi_cq_attr(Structure):
    _fields_ = [("size", c_size_t), ("flags", c_uint64), ("format", c_int),
                ("wait_obj", c_int), ("signaling_vector", c_int),
                ("wait_cond", c_int), ("wait_set", c_void_p)]


class fi_eq_attr(Structure):
    _fields_ = [("size", c_size_t), ("flags", c_uint64), ("wait_obj", c_int),
                ("signaling_vector", c_int), ("wait_set", c_void_p)]


class fi_av_set_attr(Structure):
    _fields_ = [("count", c_size_t), ("start_addr", c_uint64),
                ("end_addr", c_uint64), ("stride", c_uint64),
                ("comm_key_size", c_size_t), ("comm_key", c_void_p),
                ("flags", c_uint64)]


class fi_collective_addr(Structure):
    _fields_ = [("set", c_void_p), ("coll_addr", c_uint64)]


class fi_cq_err_entry(Structure):
    _fields_ = [("op_context", c_void_p), ("flags", c_uint64),
                ("len", c_size_t), ("buf", c_void_p), ("data", c_uint64),
                ("tag", c_uint64), ("olen", c_size_t), ("err", c_int),
                ("prov_errno", c_int), ("err_data", c_void_p),
                ("err_data_size", c_size_t)]


class fi_eq_entry(Structure):
    _fields_ = [("fid", c_void_p), ("context", c_void_p), ("data", c_uint64)]


class fi_eq_err_entry(Structure):
    _fields_ = [("fid", c_void_p), ("context", c_void_p), ("data", c_uint64),
                ("err", c_int), ("prov_errno", c_int), ("err_data", c_void_p),
                ("err_data_size", c_size_t)]


# Objects whose first member is struct fid, then one ops pointer.
class fid_ops1(Structure):
    _fields_ = [("fid", fid), ("ops", c_void_p)]


class fid_ep(Structure):
    _fields_ = [("fid", fid), ("ops", c_void_p), ("cm", c_void_p),
                ("msg", c_void_p), ("rma", c_void_p), ("tagged", c_void_p),
                ("atomic", c_void_p), ("collective", c_void_p)]


class fid_mc(Structure):
    _fields_ = [("fid", fid), ("fi_addr", c_uint64)]


class fi_ops_av(Structure):
    _fields_ = [("size", c_size_t), ("insert", c_void_p),
                ("insertsvc", c_void_p), ("insertsym", c_void_p),
                ("remove", c_void_p), ("lookup", c_void_p),
                ("straddr", c_void_p), ("av_set", c_void_p)]


class fi_ops_av_set(Structure):
    _fields_ = [("size", c_size_t), ("set_union", c_void_p),
                ("intersect", c_void_p), ("diff", c_void_p),
                ("insert", c_void_p), ("remove", c_void_p),
                ("addr", c_void_p)]


class fi_ops_cq(Structure):
    _fields_ = [("size", c_size_t), ("read", c_void_p),
                ("readfrom", c_void_p), ("readerr", c_void_p)]


class fi_ops_eq(Structure):
    _fields_ = [("size", c_size_t), ("read", c_void_p),
                ("readerr", c_void_p)]


class fi_ops_cm(Structure):
    _fields_ = [("size", c_size_t), ("setname", c_void_p),
                ("getname", c_void_p), ("getpeer", c_void_p),
                ("connect", c_void_p), ("listen", c_void_p),
                ("accept", c_void_p), ("reject", c_void_p),
                ("shutdown", c_void_p), ("join", c_void_p)]


class fi_ops_collective(Structure):
    _fields_ = [("size", c_size_t), ("barrier", c_void_p),
                ("broadcast", c_void_p), ("alltoall", c_void_p),
                ("allreduce", c_void_p), ("allgather", c_void_p),
                ("reduce_scatter", c_void_p), ("reduce", c_void_p),
                ("scatter", c_void_p), ("gather", c_void_p)]


# ---- function pointer types ------------------------------------------------

vp, u64, sz = c_void_p, c_uint64, c_size_t
T_CLOSE = CFUNCTYPE(c_int, vp)
T_BIND = CFUNCTYPE(c_int, vp, vp, u64)
T_CONTROL = CFUNCTYPE(c_int, vp, c_int, vp)
T_DOMAIN = CFUNCTYPE(c_int, vp, vp, POINTER(vp), vp)
T_EQ_OPEN = CFUNCTYPE(c_int, vp, vp, POINTER(vp), vp)
T_OPEN = CFUNCTYPE(c_int, vp, vp, POINTER(vp), vp)   # av, cq, endpoint
T_GETNAME = CFUNCTYPE(c_int, vp, vp, POINTER(sz))
T_AV_INSERT = CFUNCTYPE(c_int, vp, vp, sz, POINTER(u64), u64, vp)
T_AV_SET = CFUNCTYPE(c_int, vp, vp, POINTER(vp), vp)
T_SET_INSERT = CFUNCTYPE(c_int, vp, u64)
T_SET_ADDR = CFUNCTYPE(c_int, vp, POINTER(u64))
T_JOIN = CFUNCTYPE(c_int, vp, vp, u64, POINTER(vp), vp)
T_CQ_READ = CFUNCTYPE(c_ssize_t, vp, vp, sz)
T_CQ_READERR = CFUNCTYPE(c_ssize_t, vp, vp, u64)
T_EQ_READ = CFUNCTYPE(c_ssize_t, vp, POINTER(c_uint32), vp, sz, u64)
T_EQ_READERR = CFUNCTYPE(c_ssize_t, vp, vp, u64)
T_BARRIER = CFUNCTYPE(c_ssize_t, vp, u64, vp)
T_BROADCAST = CFUNCTYPE(c_ssize_t, vp, vp, sz, vp, u64, u64, c_int, u64, vp)
T_ALLREDUCE = CFUNCTYPE(c_ssize_t, vp, vp, sz, vp, vp, vp, u64, c_int, c_int,
                        u64, vp)
T_REDUCE_SCATTER = T_ALLREDUCE
T_ALLGATHER = CFUNCTYPE(c_ssize_t, vp, vp, sz, vp, vp, vp, u64, c_int, u64,
                        vp)


def ops_of(ptr, obj_type, ops_type, member="ops"):
    """The ops table an object at address ptr points to (member names it)."""
    obj = obj_type.from_address(ptr)
    return ops_type.from_address(getattr(obj, member))


def fn(table, name, proto):
    addr = getattr(table, name)
    if not addr:
        raise FabricError(-78, "the provider has no " + name)  # FI_ENOSYS
    return proto(addr)


# ---- the library -----------------------------------------------------------

class FabricError(RuntimeError):
    """A libfabric call failed: errno is the negative FI_E* it returned."""

    def __init__(self, errno, what):
        self.errno = errno
        super().__init__("%s: %s (%d)" % (what, strerror(errno), errno))


_lib = None


def lib():
    """libfabric.so.1: $WEFT_LIBFABRIC when set (a path), else the one the
    dynamic linker finds (LD_LIBRARY_PATH=<prefix>/lib/weft selects weft's,
    as for any libfabric program)."""
    global _lib
    if _lib is None:
        path = os.environ.get("WEFT_LIBFABRIC") or "libfabric.so.1"
        _lib = ctypes.CDLL(path)
        _lib.fi_getinfo.argtypes = [c_uint32, c_char_p, c_char_p, u64,
                                    POINTER(fi_info), POINTER(POINTER(fi_info))]
        _lib.fi_getinfo.restype = c_int
        _lib.fi_dupinfo.argtypes = [POINTER(fi_info)]
        _lib.fi_dupinfo.restype = POINTER(fi_info)
        _lib.fi_freeinfo.argtypes = [POINTER(fi_info)]
        _lib.fi_freeinfo.restype = None
        _lib.fi_fabric.argtypes = [POINTER(fi_fabric_attr), POINTER(vp), vp]
        _lib.fi_fabric.restype = c_int
        _lib.fi_strerror.argtypes = [c_int]
        _lib.fi_strerror.restype = c_char_p
    return _lib


def strerror(errno):
    try:
        return lib().fi_strerror(-errno if errno < 0 else errno).decode()
    except OSError:
        return "error %d" % errno


def check(ret, what):
    if ret < 0:
        raise FabricError(int(ret), what)
    return ret


_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.strdup.argtypes = [c_char_p]
_libc.strdup.restype = c_void_p


def strdup(s):
    """A malloc'd copy, for fields fi_freeinfo frees."""
    return _libc.strdup(s.encode())
