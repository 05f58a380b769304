"""Origin-side handles of injected functions: MPIX_Ifunc_load(3) from a
file or from bytes (an xrdma-cc image, or one built by xrdma.function)."""
import ctypes

from mpi4py import MPI

from . import _lib
from .errors import check


class Ifunc:
    """One entry of an image, loaded at this origin (MPIX_Ifunc)."""

    def __init__(self, handle, name):
        self._h = ctypes.c_void_p(handle)
        self.name = name

    @property
    def handle(self):
        """The C MPIX_Ifunc (an address), 0 once freed."""
        return self._h.value or 0

    def free(self):
        """MPIX_Ifunc_free: only when the operations that use it completed."""
        if self._h.value and not MPI.Is_finalized():
            check(_lib.MPIX_Ifunc_free(ctypes.byref(self._h)))
        self._h = ctypes.c_void_p(None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def __repr__(self):
        return f"<xrdma.Ifunc {self.name!r} at {self.handle:#x}>"


def _name(name):
    return None if name is None else name.encode()


def load(path, name=None):
    """The entry @p name (None: the image's only entry) of the image file."""
    h = ctypes.c_void_p()
    check(_lib.MPIX_Ifunc_load(str(path).encode(), _name(name), ctypes.byref(h)))
    return Ifunc(h.value, name)


def load_mem(image, name=None):
    """The entry @p name of an image held in memory (copied)."""
    data = bytes(image)
    h = ctypes.c_void_p()
    check(_lib.MPIX_Ifunc_load_mem(data, len(data), _name(name), ctypes.byref(h)))
    return Ifunc(h.value, name)
