"""MPIX_Xput, MPIX_Xget, MPIX_Xinvoke and their request variants on mpi4py
windows, with numpy (or any buffer-protocol) buffers.

Buffers follow mpi4py's conventions: an array whose MPI datatype is taken
from its dtype, or [buffer, datatype] / [buffer, count, datatype]; a target
is None (displacement 0, the origin's count and datatype), a displacement,
or (displacement, count, datatype). Buffers must be contiguous. args is
bytes-like, a contiguous numpy array or a numpy scalar, sent as its bytes
(the C function copies them). Errors raise xrdma's MPI.Exception subclasses.
"""
import ctypes

import numpy as np
from mpi4py import MPI

from . import _lib
from .errors import check, translate

def _array(buf, writable):
    if isinstance(buf, np.ndarray):
        if not buf.flags.c_contiguous:
            raise ValueError("xrdma: buffers must be contiguous (C order)")
        if writable and not buf.flags.writeable:
            raise ValueError("xrdma: the origin buffer of an Xget must be writable")
        return buf
    a = np.frombuffer(buf, dtype=np.uint8)
    if writable and not a.flags.writeable:
        raise ValueError("xrdma: the origin buffer of an Xget must be writable")
    return a


def _datatype_of(a):
    try:
        return MPI._typedict[a.dtype.char]
    except KeyError:
        raise TypeError(f"xrdma: no MPI datatype for numpy dtype {a.dtype}; "
                        "give [buffer, count, datatype]") from None


def _origin(spec, writable):
    """(keep-alive array, address, count, datatype) of an origin buffer."""
    if isinstance(spec, (list, tuple)):
        if len(spec) == 2:
            buf, dt = spec
            a = _array(buf, writable)
            count = a.nbytes // dt.Get_size() if dt.Get_size() else 0
        elif len(spec) == 3:
            buf, count, dt = spec
            a = _array(buf, writable)
        else:
            raise ValueError("xrdma: buffer spec is [buffer, datatype] or [buffer, count, datatype]")
    else:
        a = _array(spec, writable)
        dt = _datatype_of(a) if isinstance(spec, np.ndarray) else MPI.BYTE
        count = a.size if isinstance(spec, np.ndarray) else a.nbytes
    return a, (a.ctypes.data if a.nbytes else None), int(count), dt


def _target(target, count, dt):
    if target is None:
        return 0, count, dt
    if isinstance(target, (int, np.integer)):
        return int(target), count, dt
    disp, tcount, tdt = target
    return int(disp), int(tcount), tdt


def _args(args):
    """(keep-alive, address, size) of an args value."""
    if args is None:
        return None, None, 0
    if isinstance(args, np.generic):
        args = np.array(args)
    a = _array(args, False)
    return a, (a.ctypes.data if a.nbytes else None), a.nbytes


def _ifunc(ifunc):
    if ifunc is None:
        return None
    h = getattr(ifunc, "handle", None)
    if h is None:
        raise TypeError(f"xrdma: {ifunc!r} is not an Ifunc (xrdma.load) or an xrdma.function")
    return h or None


def _reraise(e):
    """Raise mpi4py's @p e as xrdma's class; a Python function's exception
    at the target becomes the cause, as if raised here."""
    new = translate(e)
    raise new from getattr(new, "python_exception", None)


class Request(MPI.Request):
    """An MPIX_Rx* request: Wait/Test raise xrdma's exception classes."""

    def Wait(self, status=None):
        try:
            return super().Wait(status)
        except MPI.Exception as e:
            _reraise(e)

    def Test(self, status=None):
        try:
            return super().Test(status)
        except MPI.Exception as e:
            _reraise(e)

    wait = Wait
    test = Test


def _xfer(c_fn, win, origin, target_rank, ifunc, args, target, writable, request):
    a, addr, count, dt = _origin(origin, writable)
    disp, tcount, tdt = _target(target, count, dt)
    keep, aaddr, asize = _args(args)
    extra = ()
    if request is not None:
        extra = (MPI._addressof(request),)
    rc = c_fn(addr, count, MPI._handleof(dt), int(target_rank), disp, tcount, MPI._handleof(tdt),
              _ifunc(ifunc), aaddr, asize, MPI._handleof(win), *extra)
    del a, keep
    check(rc)
    return request


def xput(win, origin, target_rank, ifunc=None, args=None, target=None):
    """MPIX_Xput: origin data to target_rank's region, combined there by ifunc."""
    _xfer(_lib.MPIX_Xput, win, origin, target_rank, ifunc, args, target, False, None)


def xget(win, origin, target_rank, ifunc=None, args=None, target=None):
    """MPIX_Xget: ifunc runs on target_rank's region; its reply fills origin."""
    _xfer(_lib.MPIX_Xget, win, origin, target_rank, ifunc, args, target, True, None)


def rxput(win, origin, target_rank, ifunc=None, args=None, target=None):
    """MPIX_Rxput: as xput, completed by the returned Request."""
    return _xfer(_lib.MPIX_Rxput, win, origin, target_rank, ifunc, args, target, False, Request())


def rxget(win, origin, target_rank, ifunc=None, args=None, target=None):
    """MPIX_Rxget: as xget, completed by the returned Request."""
    return _xfer(_lib.MPIX_Rxget, win, origin, target_rank, ifunc, args, target, True, Request())


def xinvoke(win, ifunc, target_rank, args=None):
    """MPIX_Xinvoke: run ifunc at target_rank, no data."""
    keep, aaddr, asize = _args(args)
    check(_lib.MPIX_Xinvoke(_ifunc(ifunc), aaddr, asize, int(target_rank), MPI._handleof(win)))
    del keep


def rxinvoke(win, ifunc, target_rank, args=None):
    """MPIX_Rxinvoke: as xinvoke, completed by the returned Request."""
    keep, aaddr, asize = _args(args)
    req = Request()
    check(_lib.MPIX_Rxinvoke(_ifunc(ifunc), aaddr, asize, int(target_rank), MPI._handleof(win),
                             MPI._addressof(req)))
    del keep
    return req


def progress():
    """MPIX_Xprogress: run arrived code; never needed for correctness."""
    check(_lib.MPIX_Xprogress())
