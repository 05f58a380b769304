"""Is this interpreter one that can run XRDMA: does it have an mpi4py built
against the MPI library XRDMA was built for?

Another python3 first on PATH (pyenv, conda, a venv: common on login
nodes) often has no mpi4py, or one built against another MPI. Importing
that mpi4py's MPI module would load a second MPI library, whose calls bind
to the first one's symbols: a crash far from the cause. So the package
checks, each failure an ImportError naming this interpreter and the one to
use: mpi4py is there (require_mpi4py(), before anything is loaded); its
extension module needs the MPI library XRDMA's core needs (read from the
two files, check_mpi_library(), before mpi4py.MPI is imported); mpi4py.MPI,
once imported, reports that library's vendor (check_vendor()). The
interpreter to use is the one the package was installed for (_config.py),
else Debian's /usr/bin/python3 when it has mpi4py."""
import ctypes
import importlib.util
import os
import re
import subprocess
import sys

from . import _elf

_MPI_LIB = re.compile(r"lib(mpi|mpich)\.so(\.|$)")
_VENDORS = {"libmpi.so.40": "Open MPI", "libmpi.so.12": "the MPICH ABI: MPICH, Intel MPI, MVAPICH",
            "libmpich.so.12": "MPICH"}
_DEBIAN = "/usr/bin/python3"


def _configured():
    try:
        from . import _config
        return getattr(_config, "PYTHON", None)
    except ImportError:
        return None


def _has_mpi4py(python):
    """Whether @p python finds mpi4py by itself (without our PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        return subprocess.run([python, "-c", "import importlib.util, sys; "
                               "sys.exit(importlib.util.find_spec('mpi4py') is None)"],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _to_use():
    """The interpreter to run XRDMA programs with, or None if none is known."""
    configured = _configured()
    if configured and os.access(configured, os.X_OK):
        return configured
    if os.access(_DEBIAN, os.X_OK) and _has_mpi4py(_DEBIAN):
        return _DEBIAN
    return None


def _advice(ours):
    here = f"This is {sys.executable} (Python {sys.version.split()[0]})."
    use = _to_use()
    if use and use != sys.executable:
        return (f"{here} Run XRDMA programs with {use}, the Python that has mpi4py for XRDMA's MPI "
                f"(mpirun -n 2 {use} app.py): a python3 first on PATH (pyenv, conda, a venv) may be another.")
    if use:
        return (f"{here} It is the Python XRDMA was built for: its own mpi4py comes after this one on its "
                "path (PYTHONPATH, a venv, -S or -I?).")
    return (f"{here} Run XRDMA programs with a Python whose mpi4py is built against {ours} ({_vendor(ours)}): "
            "Debian's /usr/bin/python3 with python3-mpi4py, or this one after `python3 -m pip install mpi4py` "
            "with that MPI's mpicc first on PATH.")


def _vendor(soname):
    return _VENDORS.get(soname, soname)


def _mpi_libraries(path):
    return [n for n in _elf.needed(path) if _MPI_LIB.match(n)]


def _loaded(prefix):
    """Path of the loaded library whose file name starts with @p prefix, or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith(prefix):
                    return path
    except OSError:
        pass
    return None


def _ours(core_name):
    core = _loaded(core_name)
    libs = _mpi_libraries(core) if core else []
    return libs[0] if libs else "libmpi.so.40"


def require_mpi4py(core_name):
    if importlib.util.find_spec("mpi4py") is None:
        raise ImportError("xrdma: this Python has no mpi4py, which XRDMA's Python package needs. "
                          + _advice(_ours(core_name)))


def check_mpi_library(core_name):
    """Before mpi4py.MPI is imported: the MPI library its extension needs
    is the one XRDMA's core (loaded, @p core_name) needs."""
    try:
        spec = importlib.util.find_spec("mpi4py.MPI")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        raise ImportError("xrdma: this Python's mpi4py has no MPI module. " + _advice(_ours(core_name)))
    core = _loaded(core_name)
    ours = set(_mpi_libraries(core)) if core else set()
    theirs = _mpi_libraries(spec.origin)
    if ours and theirs and not ours & set(theirs):
        mine = sorted(ours)[0]
        raise ImportError(f"xrdma: this Python's mpi4py ({spec.origin}) is built against {theirs[0]} "
                          f"({_vendor(theirs[0])}), XRDMA against {mine} ({_vendor(mine)}): two MPI libraries "
                          "cannot share a process. " + _advice(mine))


def library_version(lib):
    """MPI_Get_library_version() of the MPI library @p lib links (callable before MPI_Init)."""
    buf, n = ctypes.create_string_buffer(8192), ctypes.c_int(0)
    if lib.MPI_Get_library_version(buf, ctypes.byref(n)) != 0:
        return ""
    return buf.value.decode("utf-8", "replace").strip()


def check_vendor(mpi, core, core_name):
    """After mpi4py.MPI (@p mpi) is imported: the MPI vendor it reports is
    the one of the library XRDMA's core (@p core, a ctypes library) uses."""
    get_vendor = getattr(mpi, "get_vendor", None)
    if get_vendor is None:
        return
    name, version = get_vendor()
    ours = library_version(core)
    if ours and not ours.lower().startswith(str(name).lower()):
        where = getattr(sys.modules.get("mpi4py"), "__file__", "mpi4py")
        v = ".".join(str(x) for x in version) if isinstance(version, tuple) else str(version)
        raise ImportError(f"xrdma: this Python's mpi4py ({os.path.dirname(where)}) is built for {name} {v}, "
                          f"XRDMA for {ours.splitlines()[0].split(',')[0]}. " + _advice(_ours(core_name)))
