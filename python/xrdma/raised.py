"""Python exceptions raised inside shipped functions, told to the origin.

A function written in Python runs at the target without Python, and all
that comes back of a failure is the entry's int32 return value (the
origin's message reads "rank R: ifunc 'E' returned N"). So the compiler
numbers each place the function can raise (Numba keeps one constant per
exception: its class, its arguments, where) from 1, and the entry returns
EXCEPTION_RETURN - k for the k-th: nothing is read from the raising code
at the target, the number alone travels, for Xput, Xget, Xinvoke and at
any hop of a forwarded call alike. The table of those exceptions stays
with the origin that compiled (or read from the compile cache) the
function; exception_for() in errors.py turns such a code back into the
exception's type and message (IfuncRaisedError). An exception the
compiler did not see returns EXCEPTION_RETURN itself. The target also
prints the exception on its standard error (xrdma_log), for origins that
do not have the table (a C program loading a saved image).

The codes lie far below what functions return by hand, so that a returned
value is not mistaken for an exception."""
import importlib
import re
import sys

#: What the entry returns when the function raised an exception the
#: compiler could not identify; the k-th identified one returns
#: EXCEPTION_RETURN - k (1 <= k <= MAX_SITES).
EXCEPTION_RETURN = -1000000000
MAX_SITES = 999

_ARG_TYPES = (str, int, float, bool, type(None))


class Site:
    """One exception the function can raise: its type (module and
    qualified name), constant arguments and source position."""

    def __init__(self, module, qualname, args, filename=None, line=None):
        self.module, self.qualname = module, qualname
        self.args = tuple(args)
        self.filename, self.line = filename, line

    @classmethod
    def from_numba(cls, exc_class, exc_args, locinfo):
        """From what Numba stores for a raise: (class, args, (function, file, line) or None)."""
        args = tuple(a if isinstance(a, _ARG_TYPES) else repr(a) for a in (exc_args or ()))
        module = getattr(exc_class, "__module__", "builtins") if exc_class else "builtins"
        qualname = getattr(exc_class, "__qualname__", "Exception") if exc_class else "Exception"
        filename, line = (locinfo[1], locinfo[2]) if locinfo else (None, None)
        return cls(module, qualname, args, filename, line)

    def to_json(self):
        return {"module": self.module, "qualname": self.qualname, "args": list(self.args),
                "filename": self.filename, "line": self.line}

    @classmethod
    def from_json(cls, d):
        args = d["args"]
        if not isinstance(args, list) or not all(isinstance(a, _ARG_TYPES) for a in args):
            raise ValueError("bad exception arguments")
        return cls(str(d["module"]), str(d["qualname"]), args, d.get("filename"), d.get("line"))

    @property
    def type_name(self):
        return self.qualname if self.module == "builtins" else f"{self.module}.{self.qualname}"

    def message(self):
        """As Python prints it: "ZeroDivisionError: division by zero"."""
        text = ", ".join(str(a) for a in self.args) if len(self.args) != 1 else str(self.args[0])
        return f"{self.type_name}: {text}" if text else self.type_name

    def where(self):
        return f"{self.filename}, line {self.line}" if self.filename and self.line else None

    def exception_class(self):
        """The class itself when this process has it (a BaseException), else None."""
        mod = sys.modules.get(self.module)
        if mod is None:
            try:
                mod = importlib.import_module(self.module)
            except Exception:
                return None
        obj = mod
        for part in self.qualname.split("."):
            obj = getattr(obj, part, None)
        return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None

    def exception(self):
        """An instance of the exception, or None when it cannot be made here."""
        cls = self.exception_class()
        try:
            return cls(*self.args) if cls else None
        except Exception:
            return None


def code_of(k):
    return EXCEPTION_RETURN - k


# Tables of the functions this process compiled or read, by entry name; the
# latest first (the origin's message names the entry, not the image).
_tables = {}


def register(entry, sites):
    tables = _tables.setdefault(entry, [])
    same = [s.to_json() for s in sites]
    tables[:] = [t for t in tables if [s.to_json() for s in t] != same]
    tables.insert(0, list(sites))


def lookup(entry, code):
    """(k, Site or None) for a code of the exception range returned by a
    function written in Python that this process has, else None."""
    k = EXCEPTION_RETURN - code
    if not 0 <= k <= MAX_SITES or entry not in _tables:
        return None
    for sites in _tables[entry]:
        if 0 < k <= len(sites):
            return k, sites[k - 1]
    return k, None


_RETURNED = re.compile(r"rank (\d+): ifunc '([A-Za-z_][A-Za-z0-9_]*)' returned (-?\d+)")


def parse(message):
    """(rank, entry, code) from an origin's message of MPIX_ERR_IFUNC_RETURN, or None."""
    m = _RETURNED.search(message)
    return (int(m.group(1)), m.group(2), int(m.group(3))) if m else None
