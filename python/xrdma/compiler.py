"""Functions written in Python, shipped as XRDMA images: @xrdma.function.

    @xrdma.function
    def chase(ctx, args, args_size):       # numba nopython code
        ...
        return 0

compiles the function with Numba for the signature
int32(voidptr ctx, voidptr args, uintp args_size) -- what XRDMA_IFUNC
defines in C -- takes its LLVM IR, numbers the exceptions it can raise
(raised.py: Numba's pickled exception constants become numbered markers,
kept in a table at the origin), adds the C entry `chase` (which calls
Numba's function and turns the k-th exception into the return value
EXCEPTION_RETURN - k, printing it with xrdma_log) and the entry marker,
keeps only the entry and what it
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

from . import cache as _cache
from . import fingerprint
from . import image as _image
from . import raised
from . import rt
from .raised import EXCEPTION_RETURN  # noqa: F401  (public here too)

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


def _ir_string(data):
    """@p data as the body of an LLVM c"..." constant."""
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)


def _ir_bytes(body):
    """The bytes of an LLVM c"..." constant's body."""
    return bytes(int(m[1:], 16) if len(m) == 3 else ord(m) for m in re.findall(r"\\[0-9A-Fa-f]{2}|.", body))


# Numba's constant for each exception a function can raise: its pickled
# (class, args, location) and a struct pointing to them, named after id()s
# of this process; the function stores the struct's address into its
# excinfo argument and returns non-zero.
_PICKLEDATA = re.compile(r'^@"?\.const\.pickledata\.(\d+)"? = .*constant \[\d+ x i8\] c"(.*)"$', re.M)
_PICKLEBUF = re.compile(r'^@"?(\.const\.picklebuf\.\d+)"? = (.*?)constant (\{[^{}]*\}) \{.*'
                        r'@"?\.const\.pickledata\.(\d+)"?[,) ].*$', re.M)


def _site_of(data):
    import pickle
    try:
        exc_class, exc_args, locinfo = pickle.loads(data)  # Numba's own constant, made in this process
        return raised.Site.from_numba(exc_class, exc_args, locinfo)
    except Exception:
        return raised.Site("builtins", "Exception", ())


def _number_raises(text):
    """(@p text with each exception constant replaced by a numbered marker
    .const.xrdma_raise.K -- the pickled bytes, target-useless, fall away --,
    [Site of marker 1, 2, ...])."""
    data = {m.group(1): _ir_bytes(m.group(2)) for m in _PICKLEDATA.finditer(text)}
    sites, renames = [], {}
    for m in _PICKLEBUF.finditer(text):
        if len(sites) == raised.MAX_SITES:
            break
        sites.append(_site_of(data.get(m.group(4), b"")))
        k = len(sites)
        fields, first_int = [], True
        for ty in (t.strip() for t in m.group(3).strip("{} ").split(",")):
            if ty.endswith("*"):
                fields.append(f"{ty} null")
            else:
                fields.append(f"{ty} {k if first_int else 0}")  # (distinct contents: never merged)
                first_int = False
        renames[m.group(1)] = (f".const.xrdma_raise.{k}",
                               f"{m.group(2)}constant {m.group(3)} {{ {', '.join(fields)} }}")

    def define(m):
        name, body = renames.get(m.group(1), (None, None))
        return f"@{name} = {body}" if name else m.group(0)
    text = _PICKLEBUF.sub(define, text)
    for old, (new, _) in renames.items():
        text = re.sub(r'@"?' + re.escape(old) + r'"?(?![0-9])', "@" + new, text)
    return text, sites


def _entry_ir(entry, inner, inner_fn, sites):
    """LLVM IR of the C entry around Numba's function (its calling
    convention: status = f(retptr, excinfo, args...), status 0 = returned):
    the k-th of @p sites returns EXCEPTION_RETURN - k and is printed at the
    target with xrdma_log (compared by address: nothing the raising code
    left is read)."""
    argtys = [str(a.type) for a in inner_fn.arguments]
    ret_ty, exc_ty = argtys[0], argtys[1]
    if ret_ty != "i32*" or argtys[2:] != ["i8*", "i8*", "i64"]:
        raise CompileError(f"unexpected Numba signature for {entry}: {argtys}")
    marker = entry.encode() + b"\0"
    exc_elem = exc_ty[:-1]
    raised_ir = f"  ret i32 {raised.EXCEPTION_RETURN}\n"
    consts = ""
    if sites:
        def text(i, what):
            data = f"Python exception {what} (returned {raised.code_of(i)})".encode()[:400] + b"\0"
            nonlocal consts
            consts += f'@.xrdma_raise_msg.{i} = private unnamed_addr constant [{len(data)} x i8] c"{_ir_string(data)}"\n'
            return f"getelementptr ([{len(data)} x i8], [{len(data)} x i8]* @.xrdma_raise_msg.{i}, i32 0, i32 0)"
        consts += '@.xrdma_raise_fmt = private unnamed_addr constant [3 x i8] c"%s\\00"\n'
        lines = [f"  %e = load {exc_elem}, {exc_ty} %exc"]
        code, msg = f"{raised.EXCEPTION_RETURN}", text(0, "(not identified)")
        for k, site in enumerate(sites, 1):
            where = f" at {site.where()}" if site.where() else ""
            lines += [f"  %is{k} = icmp eq {exc_elem} %e, @.const.xrdma_raise.{k}",
                      f"  %c{k} = select i1 %is{k}, i32 {raised.code_of(k)}, i32 {code}",
                      f"  %m{k} = select i1 %is{k}, i8* {text(k, site.message() + where)}, i8* {msg}"]
            code, msg = f"%c{k}", f"%m{k}"
        lines += [f"  call i32 (i8*, i8*, ...) @xrdma_log(i8* %ctx, i8* getelementptr ([3 x i8], [3 x i8]* "
                  f"@.xrdma_raise_fmt, i32 0, i32 0), i8* {msg})",
                  f"  ret i32 {code}"]
        raised_ir = "\n".join(lines) + "\n"
        consts += "declare i32 @xrdma_log(i8*, i8*, ...)\n"
    return f"""
@__xrdma_entry_{entry} = constant [{len(marker)} x i8] c"{entry}\\00"
{consts}define i32 @{entry}(i8* %ctx, i8* %args, i64 %size) {{
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
{raised_ir}}}
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


def _check_entry(entry):
    if not _image._entry_name_ok(entry):
        raise CompileError(f"{entry!r} cannot be an entry name: a C identifier of 1 to 255 characters is "
                           "(name the function, or pass entry=)")


def to_bitcode(pyfunc, entry=None):
    """(bitcode, triple, imports, exception sites) of @p pyfunc as the
    XRDMA entry @p entry (sites: raised.Site of exception 1, 2, ...)."""
    entry = entry or pyfunc.__name__
    _check_entry(entry)
    _resolve_runtime_for_numba()
    try:
        disp = numba.njit(SIGNATURE, no_cpython_wrapper=True)(pyfunc)
    except numba.core.errors.NumbaError as e:
        raise CompileError(f"{entry}: Numba cannot compile it in nopython mode:\n{e}") from None
    cres = disp.overloads[SIGNATURE.args]
    inner = cres.fndesc.llvm_func_name
    text, sites = _number_raises(cres.library.get_llvm_str())
    mod = ll.parse_assembly(text)
    inner_fn = mod.get_function(inner)
    # Keep only what the entry reaches; see which externals that needs.
    mod = ll.parse_assembly(text + _entry_ir(entry, inner, inner_fn, sites))
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
    return mod.as_bitcode(), _triple_of(mod.triple), imports, sites


def _build(pyfunc, entry):
    """(metadata, image) of @p pyfunc: what the compile cache keeps."""
    bitcode, triple, imports, sites = to_bitcode(pyfunc, entry)
    image = _image.build([entry], [(_image.KIND_BITCODE, triple, bitcode)])
    return {"entry": entry, "triple": triple, "imports": imports, "exceptions": [s.to_json() for s in sites]}, image


def _accept(entry):
    """Whether a cache entry's metadata and image are those of a function
    compiled as @p entry (what Function reads of them is well-formed)."""
    def accept(meta, image):
        try:
            parts = _image.parts(image)
            for d in meta["exceptions"]:
                raised.Site.from_json(d)
            return (meta["entry"] == entry and len(parts) == 1 and parts[0][0] == _image.KIND_BITCODE
                    and parts[0][1] == meta["triple"] and isinstance(meta["imports"], list)
                    and all(isinstance(n, str) for n in meta["imports"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
    return accept


class Function:
    """A Python function compiled into an XRDMA image (origin side).

    .image: the image bytes; .bitcode; .entry; .imports (C functions the
    code calls); .exceptions (raised.Site of each exception it can raise,
    the k-th returning EXCEPTION_RETURN - k); .compile_seconds (time to get
    the image here, compiled or read from the cache); .compiled_here
    (whether this process ran the compile); .cache_path (its compile cache
    entry, or None: XRDMA_PY_CACHE=off, or .uncached_because says why).
    Pass it wherever an Ifunc goes (xrdma.xget(..., ifunc=f)): it is loaded
    (MPIX_Ifunc_load_mem) on first use. .save(path) writes the image as a
    .xfn file."""

    def __init__(self, pyfunc, entry=None):
        t0 = time.perf_counter()
        self.entry = entry or pyfunc.__name__
        _check_entry(self.entry)
        self.py_function = pyfunc
        self.cache_path = self.uncached_because = None
        dirname, key = _cache.directory(), None
        if dirname is None:
            self.uncached_because = "XRDMA_PY_CACHE is off or its directory cannot be used"
        else:
            try:
                key = fingerprint.key(pyfunc, self.entry, SIGNATURE, ll.get_process_triple())
            except fingerprint.Unkeyable as e:
                self.uncached_because = f"it reads {e}, which the cache key cannot describe"
        if key:
            meta, self.image, self.compiled_here = _cache.fetch(dirname, key, lambda: _build(pyfunc, self.entry),
                                                                _accept(self.entry))
            self.cache_path = _cache.entry_path(dirname, key)
        else:
            (meta, self.image), self.compiled_here = _build(pyfunc, self.entry), True
        self.triple, self.imports = meta["triple"], meta["imports"]
        self.exceptions = [raised.Site.from_json(d) for d in meta["exceptions"]]
        self.bitcode = _image.parts(self.image)[0][2]
        raised.register(self.entry, self.exceptions)
        self.compile_seconds = time.perf_counter() - t0
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
