"""XRDMA's errors as mpi4py.MPI.Exception subclasses.

Every XRDMA error code belongs to an MPI error class (MPIX_ERR_IFUNC_IMAGE
... created by the C library in MPI_Init) and carries XRDMA's message
(MPI_Error_string). raise_for() turns a code into the subclass of its class,
so `except xrdma.IfuncReturnError` and `except MPI.Exception` both work and
e.Get_error_class() / e.Get_error_string() / str(e) tell what happened. A
Python function that raised at the target gives IfuncRaisedError, which
names the Python exception (raised.py)."""
import ctypes

from mpi4py import MPI

from . import _lib
from . import raised


class XrdmaError(MPI.Exception):
    """An error of an X-operation (base of the classes below)."""
    c_name = None

    def __str__(self):
        try:
            return self.Get_error_string()
        except UnicodeDecodeError:
            # XRDMA's own messages are UTF-8 (core/errors.cc); one that is
            # not still prints, with its odd bytes replaced.
            return error_string(self.Get_error_code())


def error_string(code):
    """MPI_Error_string of @p code, undecodable bytes replaced: never raises
    UnicodeDecodeError as mpi4py's Get_error_string() may."""
    buf = ctypes.create_string_buffer(MPI.MAX_ERROR_STRING)
    n = ctypes.c_int(0)
    if _lib.core.MPI_Error_string(code, buf, ctypes.byref(n)) != MPI.SUCCESS:
        return f"MPI error code {code}"
    return buf.raw[:n.value].decode("utf-8", errors="replace")


def _error_class(name, c_name, doc):
    return type(name, (XrdmaError,), {"c_name": c_name, "__doc__": f"{doc} ({c_name})."})


IfuncImageError = _error_class("IfuncImageError", "MPIX_ERR_IFUNC_IMAGE", "Malformed or tampered image, missing entry")
IfuncLinkError = _error_class("IfuncLinkError", "MPIX_ERR_IFUNC_LINK", "The code could not be loaded at the target")
IfuncDeniedError = _error_class("IfuncDeniedError", "MPIX_ERR_IFUNC_DENIED", "Refused by the target's symbol policy")
IfuncFaultError = _error_class("IfuncFaultError", "MPIX_ERR_IFUNC_FAULT", "The code faulted at the target")
IfuncReturnError = _error_class("IfuncReturnError", "MPIX_ERR_IFUNC_RETURN", "The function returned non-zero")
IfuncTimeoutError = _error_class("IfuncTimeoutError", "MPIX_ERR_IFUNC_TIMEOUT", "It ran past XRDMA_IFUNC_TIMEOUT")
PeerError = _error_class("PeerError", "MPIX_ERR_PEER", "Target unreachable or failed")


class IfuncRaisedError(IfuncReturnError):
    """A function written in Python raised an exception at the target
    (MPIX_ERR_IFUNC_RETURN). .exc_type_name and .exc_args say which, with
    .exc_type (the class, when this process has it), .where (file, line)
    and .rank (where it was raised); str(e) adds "TypeName: message"."""

    def __str__(self):
        text = f"{self.Get_error_string()}: the Python function raised {self.description}"
        return f"{text} ({self.where})" if self.where else text


def _raised_error(code, message):
    """IfuncRaisedError for an MPIX_ERR_IFUNC_RETURN code whose message says
    the function returned one of the exception codes, else None."""
    got = raised.parse(message)
    found = got and raised.lookup(got[1], got[2])
    if not found:
        return None
    k, site = found
    e = IfuncRaisedError(code)
    e.rank, e.entry, e.site = got[0], got[1], k
    if site is None:
        e.exc_type = e.exc_type_name = None
        e.exc_args, e.where, e.python_exception = (), None, None
        e.description = "an exception" if k == 0 else f"exception number {k} of another function of that name"
        return e
    e.exc_type, e.exc_type_name, e.exc_args = site.exception_class(), site.type_name, site.args
    e.where, e.python_exception, e.description = site.where(), site.exception(), site.message()
    return e


CLASSES = (IfuncImageError, IfuncLinkError, IfuncDeniedError, IfuncFaultError, IfuncReturnError,
           IfuncTimeoutError, PeerError)


def exception_for(code):
    """The exception for MPI error code @p code: the XrdmaError subclass of
    its class when that is one of XRDMA's, else a plain MPI.Exception."""
    cls = MPI.Get_error_class(code)
    for c in CLASSES:
        if _lib.error_class(c.c_name) == cls:
            if c is IfuncReturnError:
                return _raised_error(code, MPI.Get_error_string(code)) or c(code)
            return c(code)
    return MPI.Exception(code)


def check(code):
    if code != MPI.SUCCESS:
        raise exception_for(code)


def translate(exc):
    """An MPI.Exception raised by mpi4py (win.Flush(), req.Wait() ...) as
    the XRDMA subclass of its class, or @p exc itself."""
    if isinstance(exc, XrdmaError) or not isinstance(exc, MPI.Exception):
        return exc
    new = exception_for(exc.Get_error_code())
    return new if isinstance(new, XrdmaError) else exc
