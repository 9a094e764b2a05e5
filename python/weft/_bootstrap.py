# SPDX-License-Identifier: MIT
"""Who am I, how many are we, and everyone's endpoint name.

Three launchers, tried in this order:
  - torch.distributed style: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    (torchrun sets them; so can any script). Rank 0 listens on
    MASTER_ADDR:MASTER_PORT, the others connect and send their name, rank
    0 answers every rank with all names in rank order (rendezvous()).
  - mpirun (Open MPI): OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; the
    names go through mpi4py's allgather when mpi4py imports, else through
    the TCP rendezvous when MASTER_ADDR and MASTER_PORT are set too.
  - neither: one process, rank 0 of 1.
"""
import os
import socket
import struct
import time
import warnings

MAGIC = b"WEFTRDV1"
NAME_MAX = 4096
_HDR = struct.Struct("!8sII")          # magic, rank, world size
_LEN = struct.Struct("!I")


class BootstrapError(RuntimeError):
    pass


def _int_env(name):
    v = os.environ.get(name)
    if v is None:
        return None
    try:
        return int(v)
    except ValueError:
        raise BootstrapError("%s=%r is not an integer" % (name, v)) from None


def launcher():
    """(rank, size, how): how is "env", "mpi" or "single"."""
    rank, size = _int_env("RANK"), _int_env("WORLD_SIZE")
    how = "env"
    if rank is None or size is None:
        rank = _int_env("OMPI_COMM_WORLD_RANK")
        size = _int_env("OMPI_COMM_WORLD_SIZE")
        how = "mpi"
    if rank is None or size is None:
        return 0, 1, "single"
    if size < 1 or not 0 <= rank < size:
        raise BootstrapError("rank %d of %d is out of range" % (rank, size))
    return rank, size, how


def exchange(name, rank, size, how, timeout=60.0):
    """Every rank's name, in rank order."""
    if size == 1:
        return [name]
    if how == "mpi":
        try:
            from mpi4py import MPI
        except ImportError:
            MPI = None
        if MPI is not None:
            comm = MPI.COMM_WORLD
            if comm.Get_size() != size or comm.Get_rank() != rank:
                raise BootstrapError("mpi4py's rank %d of %d is not the "
                                     "launcher's %d of %d" %
                                     (comm.Get_rank(), comm.Get_size(), rank,
                                      size))
            return comm.allgather(name)
    addr, port = os.environ.get("MASTER_ADDR"), _int_env("MASTER_PORT")
    if not addr or port is None:
        raise BootstrapError("%d ranks need MASTER_ADDR and MASTER_PORT "
                             "(or mpirun with mpi4py) to exchange addresses"
                             % size)
    return rendezvous(name, rank, size, addr, port, timeout)


# ---- the TCP rendezvous ------------------------------------------------------

def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise BootstrapError("rendezvous peer closed the connection")
        buf += chunk
    return bytes(buf)


def _send_name(sock, name):
    sock.sendall(_LEN.pack(len(name)) + name)


def _recv_name(sock):
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if n > NAME_MAX:
        raise BootstrapError("rendezvous: a name of %d bytes (max %d)" %
                             (n, NAME_MAX))
    return _recv_exact(sock, n)


def rendezvous(name, rank, size, addr, port, timeout=60.0):
    """All names in rank order, through rank 0 at addr:port."""
    if rank == 0:
        return _serve(name, size, addr, port, timeout)
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection((addr, port), timeout=timeout)
            break
        except OSError as e:
            # rank 0 may not listen yet
            if time.monotonic() > deadline:
                raise BootstrapError("rendezvous: cannot reach %s:%d: %s" %
                                     (addr, port, e)) from None
            time.sleep(0.05)
    with sock:
        sock.settimeout(timeout)
        sock.sendall(_HDR.pack(MAGIC, rank, size))
        _send_name(sock, name)
        return [_recv_name(sock) for _ in range(size)]


def _serve(name, size, addr, port, timeout):
    names = [None] * size
    names[0] = name
    conns = {}
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((addr, port))
        srv.listen(size)
        srv.settimeout(timeout)
        try:
            while len(conns) < size - 1:
                try:
                    c, _ = srv.accept()
                except socket.timeout:
                    raise BootstrapError("rendezvous: %d of %d ranks came "
                                         "in %g s" % (len(conns) + 1, size,
                                                      timeout)) from None
                c.settimeout(timeout)
                magic, r, n = _HDR.unpack(_recv_exact(c, _HDR.size))
                if magic != MAGIC or n != size or not 0 < r < size or \
                        r in conns:
                    # not one of ours (or a duplicate): drop it, keep
                    # waiting for the real ranks
                    warnings.warn("weft rendezvous: dropped a connection "
                                  "saying rank %d of %d" % (r, n))
                    c.close()
                    continue
                names[r] = _recv_name(c)
                conns[r] = c
            for c in conns.values():
                for nm in names:
                    _send_name(c, nm)
        finally:
            for c in conns.values():
                c.close()
    return names
