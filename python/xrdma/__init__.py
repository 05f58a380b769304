"""xrdma: XRDMA's X-operations for mpi4py programs.

    import xrdma                 # before mpi4py.MPI (see _lib.py)
    from mpi4py import MPI

Ship code with one-sided operations on mpi4py windows: xput, xget,
xinvoke and rxput, rxget, rxinvoke (requests); load images made by
xrdma-cc (load, load_mem) or write the function in Python with
@xrdma.function (compiled by Numba to LLVM bitcode; the targets run it
without Python). Errors are mpi4py.MPI.Exception subclasses (errors.py).
See docs/guide/2-shipping.md ("Python") and xrdma(7)."""
from . import _lib  # (must load before mpi4py.MPI)
_lib.import_mpi()
from . import _uncaught  # noqa: F401,E402  (an uncaught exception aborts the job: no hang in MPI_Finalize)
from .errors import (CLASSES, IfuncDeniedError, IfuncFaultError, IfuncImageError, IfuncLinkError,  # noqa: F401
                     IfuncRaisedError, IfuncReturnError, IfuncTimeoutError, PeerError, XrdmaError, translate)
from .raised import EXCEPTION_RETURN  # noqa: F401
from .ifunc import Ifunc, load, load_mem  # noqa: F401
from .ops import Request, progress, rxget, rxinvoke, rxput, xget, xinvoke, xput  # noqa: F401

__version__ = "0.1.0"


def __getattr__(name):
    # Numba is imported only by programs that write functions in Python.
    import importlib
    if name in ("function", "Function", "CompileError"):
        return getattr(importlib.import_module(".compiler", __name__), name)
    if name in ("rt", "compiler", "image", "cache", "fingerprint", "knobs", "raised"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'xrdma' has no attribute {name!r}")
