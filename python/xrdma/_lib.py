"""Loading XRDMA's C libraries into this process, before mpi4py's MPI.

XRDMA sets windows up inside MPI_Win_allocate & co. by defining those
functions ahead of libmpi (the PMPI interposition of libmpix_xrdma_core).
mpi4py's MPI module binds its MPI calls when it is imported, so the core
must be loaded first, with RTLD_GLOBAL, exactly as LD_PRELOAD would do:
importing xrdma after mpi4py.MPI is refused with an ImportError that says so.

Where the libraries are: $XRDMA_LIBDIR if set (the test harness points it
into a build tree), else the libdir this package was installed with
(_config.py, written by `make install`), else the dynamic loader's search.
Which interpreter can run XRDMA at all is _interpreter.py's concern.
"""
import ctypes
import os
import sys

from . import _interpreter

CORE = "libmpix_xrdma_core.so.0"
MPIX = "libmpix_xrdma.so.0"


def _libdir():
    d = os.environ.get("XRDMA_LIBDIR")
    if d:
        return d
    try:
        from . import _config
        return _config.LIBDIR
    except ImportError:
        return None


def _open(name):
    d = _libdir()
    path = os.path.join(d, name) if d else name
    try:
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ImportError(f"xrdma: cannot load {path}: {e} (set XRDMA_LIBDIR to the directory "
                          f"holding {name})") from e


if "mpi4py.MPI" in sys.modules:
    raise ImportError("xrdma must be imported before mpi4py.MPI: XRDMA's MPI_Win_* "
                      "interposition has to be loaded ahead of libmpi (import xrdma first, "
                      "or run with LD_PRELOAD=libmpix_xrdma_core.so.0)")

core = _open(CORE)
lib = _open(MPIX)
# This interpreter's mpi4py must be there and use XRDMA's MPI library
# (_interpreter.py); its vendor is checked once mpi4py.MPI is imported.
_interpreter.require_mpi4py(CORE)
_interpreter.check_mpi_library(CORE)


def import_mpi():
    """mpi4py.MPI, after checking that it reports XRDMA's MPI vendor."""
    from mpi4py import MPI
    _interpreter.check_vendor(MPI, core, CORE)
    return MPI

_p, _i, _s = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
_a = ctypes.c_ssize_t  # MPI_Aint
_ph = ctypes.POINTER(ctypes.c_void_p)  # MPIX_Ifunc *, MPI_Request * (Open MPI: pointers)


def _proto(name, *args):
    f = getattr(lib, name)
    f.argtypes = list(args)
    f.restype = _i
    return f


MPIX_Ifunc_load = _proto("MPIX_Ifunc_load", ctypes.c_char_p, ctypes.c_char_p, _ph)
MPIX_Ifunc_load_mem = _proto("MPIX_Ifunc_load_mem", _p, _s, ctypes.c_char_p, _ph)
MPIX_Ifunc_free = _proto("MPIX_Ifunc_free", _ph)
_XFER = (_p, _i, _p, _i, _a, _i, _p, _p, _p, _i, _p)
MPIX_Xput = _proto("MPIX_Xput", *_XFER)
MPIX_Xget = _proto("MPIX_Xget", *_XFER)
MPIX_Rxput = _proto("MPIX_Rxput", *_XFER, _p)
MPIX_Rxget = _proto("MPIX_Rxget", *_XFER, _p)
MPIX_Xinvoke = _proto("MPIX_Xinvoke", _p, _p, _i, _i, _p)
MPIX_Rxinvoke = _proto("MPIX_Rxinvoke", _p, _p, _i, _i, _p, _p)
MPIX_Xprogress = _proto("MPIX_Xprogress")

# The plugin's image reader (ucx_ifunc(3)), for xrdma.image.check().
ucx_ifunc_image_check = core.ucx_ifunc_image_check
ucx_ifunc_image_check.restype = _i
ucx_ifunc_image_check.argtypes = [ctypes.c_char_p, _s, ctypes.c_char_p, ctypes.c_char_p, _s, ctypes.c_char_p, _s]


def error_class(name):
    """Value of one of the C library's MPIX_ERR_* variables (set in MPI_Init)."""
    return ctypes.c_int.in_dll(lib, name).value


def symbol_address(name):
    """Address of a function of the loaded XRDMA libraries, or None."""
    for l in (lib, core):
        try:
            return ctypes.cast(getattr(l, name), ctypes.c_void_p).value
        except AttributeError:
            continue
    return None
