"""Functions written in Python, shipped as XRDMA images: @xrdma.function.

    @xrdma.function
    def chase(ctx, args, args_size):       # numba nopython code
        ...
        return 0

compiles the function with Numba for the signature
int32(voidptr ctx, voidptr args, uintp args_size) -- what XRDMA_IFUNC
defines in C -- takes its LLVM IR, adds the C entry `chase` (which calls
Numba's function and turns a raised exception into the return value
EXCEPTION_RETURN) and the entry marker, keeps only the entry and what it
calls (everything else internal, then LLVM's global dead-code elimination),
renumbers Numba's per-process function numbers out of it (the same function
makes the same image on every rank: one copy in a target's cache), and
writes an image with that module's LLVM bitcode as its one part
(xrdma-image(5), kind 2, for this machine's triple). The target compiles the
bitcode with its LLVM JIT like bitcode from xrdma-cc: it runs no Python and
needs no Numba. rt.py lists what the function may call at the target.

What the target cannot link is refused here with CompileError naming the
symbols: Numba's runtime (NRT_*: arrays created in the function), the
Python C API (Py*), Numba's C helpers (numba_*). Views of window memory and
args (numba.carray) need none of them: Numba's reference counting of such
views is optimised away, and is dead code after the stripping above.
Everything else the function imports is listed in .imports; the target's
symbol policy (XRDMA_SYMBOLS) decides as for C code."""
import re
import time

import llvmlite.binding as ll
import numba
from numba import types

from . import image as _image
from . import rt

#: What the entry returns when the Python function raised an exception.
EXCEPTION_RETURN = -100

SIGNATURE = types.int32(types.voidptr, types.voidptr, types.uintp)
_REFUSED = (re.compile(r"NRT_"), re.compile(r"_?Py"), re.compile(r"numba_"))


class CompileError(Exception):
    """A Python function that cannot become an XRDMA image."""


def _triple_of(module_triple):
    """XRDMA's form of a triple: no vendor (x86_64-pc-linux-gnu -> x86_64-linux-gnu)."""
    p = module_triple.split("-")
    return "-".join([p[0]] + p[2:]) if len(p) == 4 else module_triple


_symbols_ready = False


def _resolve_runtime_for_numba():
    """Numba links what it compiles into this process, so the runtime's
    names must resolve here too: the real functions when the XRDMA library
    is loaded, else abort() (never called: the origin does not run it)."""
    global _symbols_ready
    if _symbols_ready:
        return
    import ctypes
    from . import _lib
    abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value
    for name in rt.RUNTIME:
        if not ll.address_of_symbol(name):
            ll.add_symbol(name, _lib.symbol_address(name) or abort)
    _symbols_ready = True


def _entry_ir(entry, inner, inner_fn):
    """LLVM IR of the C entry around Numba's function (its calling
    convention: status = f(retptr, excinfo, args...), status 0 = returned)."""
    argtys = [str(a.type) for a in inner_fn.arguments]
    ret_ty, exc_ty = argtys[0], argtys[1]
    if ret_ty != "i32*" or argtys[2:] != ["i8*", "i8*", "i64"]:
        raise CompileError(f"unexpected Numba signature for {entry}: {argtys}")
    marker = entry.encode() + b"\0"
    exc_elem = exc_ty[:-1]
    return f"""
@__xrdma_entry_{entry} = constant [{len(marker)} x i8] c"{entry}\\00"
define i32 @{entry}(i8* %ctx, i8* %args, i64 %size) {{
  %ret = alloca i32
  store i32 0, i32* %ret
  %exc = alloca {exc_elem}
  store {exc_elem} null, {exc_ty} %exc
  %st = call i32 @"{inner}"(i32* %ret, {exc_ty} %exc, i8* %ctx, i8* %args, i64 %size)
  %ok = icmp eq i32 %st, 0
  br i1 %ok, label %good, label %raised
good:
  %r = load i32, i32* %ret
  ret i32 %r
raised:
  ret i32 {EXCEPTION_RETURN}
}}
"""


# Numba gives every function it compiles a number of its own, in the order
# the process compiles them, as an ABI tag of its mangled name ("B2v1":
# source name of length 2, "v1"). Its names stay in the module after
# inlining (block labels, alias-scope metadata): the same function compiled
# again, or on a rank that compiled other functions first, would make other
# image bytes, so another hash, and a target would load (and JIT-compile)
# one copy per origin.
_NUMBA_UID = re.compile(r"B(\d+)(v\d+)")


def _canonical_ir(text):
    """@p text with Numba's compile numbers renumbered in order of first
    appearance (v1, v2, ...): the same function, the same IR."""
    seen = {}

    def renumber(m):
        if int(m.group(1)) != len(m.group(2)):  # (not an ABI tag of that form)
            return m.group(0)
        tag = seen.setdefault(m.group(2), f"v{len(seen) + 1}")
        return f"B{len(tag)}{tag}"
    return _NUMBA_UID.sub(renumber, text)


def _declared(module):
    return sorted(f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm."))


def to_bitcode(pyfunc, entry=None):
    """(bitcode, triple, imports) of @p pyfunc as the XRDMA entry @p entry."""
    entry = entry or pyfunc.__name__
    if not _image._entry_name_ok(entry):
        raise CompileError(f"{entry!r} cannot be an entry name: a C identifier of 1 to 255 characters is "
                           "(name the function, or pass entry=)")
    _resolve_runtime_for_numba()
    try:
        disp = numba.njit(SIGNATURE, no_cpython_wrapper=True)(pyfunc)
    except numba.core.errors.NumbaError as e:
        raise CompileError(f"{entry}: Numba cannot compile it in nopython mode:\n{e}") from None
    cres = disp.overloads[SIGNATURE.args]
    inner = cres.fndesc.llvm_func_name
    text = cres.library.get_llvm_str()
    mod = ll.parse_assembly(text)
    inner_fn = mod.get_function(inner)
    # Keep only what the entry reaches; see which externals that needs.
    mod = ll.parse_assembly(text + _entry_ir(entry, inner, inner_fn))
    keep = {entry, f"__xrdma_entry_{entry}"}
    for f in mod.functions:
        if not f.is_declaration and f.name not in keep:
            f.linkage = ll.Linkage.internal
    for g in mod.global_variables:
        if g.name not in keep:
            g.linkage = ll.Linkage.internal
    pmb = ll.create_pass_manager_builder()
    pmb.opt_level = 2
    pmb.inlining_threshold = 275
    pm = ll.create_module_pass_manager()
    pmb.populate(pm)
    pm.add_global_dce_pass()
    pm.run(mod)
    imports = _declared(mod)
    refused = [n for n in imports if any(r.match(n) for r in _REFUSED)]
    if refused:
        raise CompileError(f"{entry}: needs {', '.join(refused)}, which an XRDMA target does not "
                           "provide (Numba's runtime, the Python C API or Numba's helpers): "
                           "create no arrays in the function (view window memory and args with "
                           "numba.carray) and call only numba nopython code and xrdma.rt")
    mod = ll.parse_assembly(_canonical_ir(str(mod)))
    mod.verify()
    return mod.as_bitcode(), _triple_of(mod.triple), imports


class Function:
    """A Python function compiled into an XRDMA image (origin side).

    .image: the image bytes; .bitcode; .entry; .imports (C functions the
    code calls); .compile_seconds. Pass it wherever an Ifunc goes
    (xrdma.xget(..., ifunc=f)): it is loaded (MPIX_Ifunc_load_mem) on first
    use. .save(path) writes the image as a .xfn file."""

    def __init__(self, pyfunc, entry=None):
        t0 = time.perf_counter()
        self.entry = entry or pyfunc.__name__
        self.bitcode, self.triple, self.imports = to_bitcode(pyfunc, self.entry)
        self.image = _image.build([self.entry], [(_image.KIND_BITCODE, self.triple, self.bitcode)])
        self.compile_seconds = time.perf_counter() - t0
        self.py_function = pyfunc
        self._loaded = None

    @property
    def handle(self):
        if self._loaded is None:
            from .ifunc import load_mem
            self._loaded = load_mem(self.image, self.entry)
        return self._loaded.handle

    def free(self):
        if self._loaded is not None:
            self._loaded.free()
            self._loaded = None

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.image)

    def __repr__(self):
        return f"<xrdma.function {self.entry!r}: {len(self.image)} B image, bitcode for {self.triple}>"


def function(pyfunc=None, *, entry=None):
    """Decorator: compile now, return a Function (see its doc)."""
    if pyfunc is None:
        return lambda f: Function(f, entry)
    return Function(pyfunc, entry)
