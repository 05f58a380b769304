"""What determines the image of a function written in Python, as one hash:
the compile cache's key (cache.py).

Numba compiles a function from its bytecode and freezes what it reads at
compile time: global and closure values, module attributes, the functions
it calls (their code and what they read in turn). The key covers those,
the entry name and signature, the interpreter, Numba, llvmlite and numpy
versions and settings that change code, the target triple, and this
package's compiler sources (a change of XRDMA's compiler is a new key). A
value whose content cannot be told from its representation (an object
printed with its address) makes the function unkeyable: it is compiled
without the cache rather than risk another function's image."""
import enum
import hashlib
import os
import sys
import types

import numpy as np

# Code of these packages is covered by their versions in the key.
_LIBRARIES = ("numba", "llvmlite", "numpy", "xrdma", "builtins", "math", "cmath", "operator")
# This package's files that shape an image.
_COMPILER_FILES = ("compiler.py", "rt.py", "image.py", "raised.py", "fingerprint.py")
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
# What a module or class attribute the function names may hold that Numba
# freezes into the code (its functions are looked at where they are called).
_DATA = _SCALARS + (tuple, list, frozenset, np.ndarray, np.generic, enum.Enum)


class Unkeyable(Exception):
    """The function reads a value the key cannot describe."""


def _library(module_name):
    return (module_name or "").split(".")[0] in _LIBRARIES


class _Key:
    def __init__(self):
        self._h = hashlib.sha256()
        self._seen = set()

    def add(self, *parts):
        for p in parts:
            b = p if isinstance(p, bytes) else str(p).encode("utf-8", "backslashreplace")
            self._h.update(len(b).to_bytes(8, "little") + b)

    def hexdigest(self):
        return self._h.hexdigest()

    def code(self, co):
        self.add("code", co.co_argcount, co.co_posonlyargcount, co.co_kwonlyargcount, co.co_flags, co.co_code,
                 co.co_names, co.co_varnames, co.co_freevars, co.co_cellvars, co.co_filename, co.co_name,
                 co.co_firstlineno, getattr(co, "co_linetable", None) or getattr(co, "co_lnotab", b""),
                 getattr(co, "co_exceptiontable", b""))
        for c in co.co_consts:
            if isinstance(c, types.CodeType):
                self.code(c)
            else:
                self.value(c)

    def function(self, fn):
        if id(fn) in self._seen:
            self.add("again", fn.__module__, fn.__qualname__)
            return
        self._seen.add(id(fn))
        self.code(fn.__code__)
        names = sorted(_names(fn.__code__))
        g = fn.__globals__
        for name in names:
            if name not in g:
                continue
            v = g[name]
            self.add("global", name)
            self.value(v)
            owner = v.__name__ if isinstance(v, types.ModuleType) else getattr(v, "__module__", None)
            if isinstance(v, (types.ModuleType, type)) and not _library(owner):  # (module.NAME: frozen too)
                for attr in names:
                    a = getattr(v, attr, None)
                    if isinstance(a, _DATA) or isinstance(getattr(a, "py_func", None), types.FunctionType):
                        self.add("attr", attr)
                        self.value(a)
        for cell in fn.__closure__ or ():
            try:
                self.value(cell.cell_contents)
            except ValueError:
                self.add("empty cell")
        self.value(fn.__defaults__)
        self.value(tuple(sorted((fn.__kwdefaults__ or {}).items())))

    def value(self, v):
        if isinstance(v, _SCALARS):
            self.add(type(v).__name__, repr(v))
        elif isinstance(v, (tuple, list)):
            self.add(type(v).__name__, len(v))
            for x in v:
                self.value(x)
        elif isinstance(v, frozenset):
            self.add("frozenset", sorted(repr(x) for x in v))
        elif isinstance(v, np.ndarray):
            self.add("ndarray", v.dtype.str, v.shape, hashlib.sha256(np.ascontiguousarray(v).tobytes()).digest())
        elif isinstance(v, np.generic):
            self.add("npscalar", v.dtype.str, repr(v.item()))
        elif isinstance(v, types.ModuleType):
            self.add("module", v.__name__)
        elif isinstance(v, enum.Enum):
            self.add("enum", type(v).__module__, type(v).__qualname__, v.name, repr(v.value))
        elif isinstance(getattr(v, "py_func", None), types.FunctionType):  # a Numba dispatcher
            self.add("dispatcher", repr(sorted(getattr(v, "targetoptions", {}).items())))
            self.function(v.py_func)
        elif isinstance(getattr(v, "_defn", None), types.FunctionType) and not _library(v._defn.__module__):
            self.add("intrinsic")  # (a user's @intrinsic: its typing and code generation)
            self.function(v._defn)
        elif isinstance(v, types.FunctionType) and not _library(v.__module__):
            self.function(v)
        elif isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType)) or _library(type(v).__module__):
            r = repr(v)
            if "0x" in r and not isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType)):
                raise Unkeyable(f"{r} (a {type(v).__qualname__})")
            self.add("ref", getattr(v, "__module__", type(v).__module__), getattr(v, "__qualname__", r))
        else:
            r = repr(v)
            if "0x" in r:
                raise Unkeyable(f"{r} (a {type(v).__qualname__})")
            self.add("repr", type(v).__module__, type(v).__qualname__, r)


def _names(co):
    """Every global or attribute name @p co and the code nested in it use."""
    out = set(co.co_names)
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


_compiler_digest = None


def _compiler_sources():
    global _compiler_digest
    if _compiler_digest is None:
        h = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(__file__))
        for name in _COMPILER_FILES:
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read())
        _compiler_digest = h.hexdigest()
    return _compiler_digest


def key(pyfunc, entry, signature, triple):
    """The hex SHA-256 key of @p pyfunc compiled as @p entry for
    @p signature and @p triple; raises Unkeyable."""
    import llvmlite
    import numba
    if not isinstance(pyfunc, types.FunctionType):
        raise Unkeyable(f"{pyfunc!r}, not a Python function")
    k = _Key()
    k.add("xrdma python function", 1, entry, str(signature), triple, _compiler_sources(),
          sys.implementation.name, sys.version, numba.__version__, llvmlite.__version__, np.__version__)
    cfg = numba.config
    k.add(*(repr(getattr(cfg, n, None)) for n in ("OPT", "BOUNDSCHECK", "DEBUGINFO_DEFAULT", "CPU_NAME",
                                                   "CPU_FEATURES", "LOOP_VECTORIZE", "SLP_VECTORIZE")))
    k.function(pyfunc)
    return k.hexdigest()
