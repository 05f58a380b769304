"""The compile cache of functions written in Python: one compile per node.

Every rank that defines an @xrdma.function would otherwise run its own
Numba and LLVM compile of the same code (seconds each when 64 ranks of a
node do it at once). Entries live in one directory (XRDMA_PY_CACHE,
knobs.py), one file per key (fingerprint.py: a hash of everything that
determines the image):

    <key>.xpyf   magic "XRDMAPYF", format version, lengths, SHA-256 of what
                 follows, the metadata (JSON: key, entry, triple, imports,
                 the exception table of raised.py), the image
    <key>.lock   taken (flock) by the process that builds the entry

fetch() reads a valid entry without any lock. Otherwise it takes the
entry's lock, looks again (another process may have built it meanwhile),
builds the entry itself if it still has none, and publishes it whole
(a temporary file renamed over the name). Nothing is collective: a rank
waits only for a compile that another process of the node is running,
and the kernel drops the lock of a process that dies. An entry that does
not check out (truncated, corrupt, another format, another key, an image
the C reader refuses) is rebuilt and replaced. A directory that cannot be
used, or that other users may write (they could plant code), is not used:
the function is compiled here, with a warning."""
import errno
import fcntl
import hashlib
import json
import os
import struct
import tempfile
import warnings

from . import image as _image
from . import knobs

MAGIC = b"XRDMAPYF"
VERSION = 1
_HEADER = struct.Struct("<8sIIQ32s")  # magic, version, metadata bytes, image bytes, SHA-256
_OFF = ("off", "0", "no", "none", "false")


def directory():
    """The cache directory the knob names (made if missing), or None: off,
    or not usable (warned once)."""
    v = knobs.get("XRDMA_PY_CACHE").strip()
    if v.lower() in _OFF:
        return None
    if not v:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        v = os.path.join(base, "xrdma", "python")
    try:
        os.makedirs(v, mode=0o700, exist_ok=True)
        st = os.stat(v)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise OSError(errno.EPERM, "owned by another user or writable by others")
        return v
    except OSError as e:
        _warn_once(v, f"XRDMA_PY_CACHE={v}: cannot use it ({e.strerror or e}); each process compiles "
                      "its own functions")
        return None


_warned = set()


def _warn_once(what, text):
    if what not in _warned:
        _warned.add(what)
        warnings.warn(text, RuntimeWarning, stacklevel=4)


def entry_path(dirname, key):
    return os.path.join(dirname, key + ".xpyf")


def encode(meta, image):
    m = json.dumps(meta, sort_keys=True).encode()
    return _HEADER.pack(MAGIC, VERSION, len(m), len(image), hashlib.sha256(m + image).digest()) + m + image


def decode(data, key, accept):
    """(metadata, image) of a cache file's bytes, or None if it does not
    check out for @p key or accept(metadata, image) says no."""
    if len(data) < _HEADER.size:
        return None
    magic, version, mlen, ilen, digest = _HEADER.unpack_from(data)
    body = data[_HEADER.size:]
    if magic != MAGIC or version != VERSION or len(body) != mlen + ilen or hashlib.sha256(body).digest() != digest:
        return None
    try:
        meta = json.loads(body[:mlen])
    except ValueError:
        return None
    image = bytes(body[mlen:])
    if not isinstance(meta, dict) or meta.get("key") != key or not isinstance(meta.get("entry"), str):
        return None
    if _image.check(image, meta["entry"]) is not None or not accept(meta, image):
        return None
    return meta, image


def _read(path, key, accept):
    try:
        with open(path, "rb") as f:
            return decode(f.read(), key, accept)
    except OSError:
        return None


def _publish(dirname, path, data):
    fd, tmp = tempfile.mkstemp(dir=dirname, prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def fetch(dirname, key, build, accept):
    """(metadata, image, built here) of entry @p key: read from the cache,
    or built by build() -> (metadata, image) and stored, once per key for
    all the processes that share @p dirname. accept(metadata, image) checks
    what the caller needs of an entry read."""
    path = entry_path(dirname, key)
    got = _read(path, key, accept)
    if got:
        return got[0], got[1], False
    try:
        lock = open(os.path.join(dirname, key + ".lock"), "a")
    except OSError as e:
        _warn_once(dirname, f"XRDMA_PY_CACHE={dirname}: cannot lock an entry ({e.strerror}); compiling here")
        meta, image = build()
        return meta, image, True
    with lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        got = _read(path, key, accept)
        if got:
            return got[0], got[1], False
        meta, image = build()
        meta = dict(meta, key=key)
        try:
            _publish(dirname, path, encode(meta, image))
        except OSError as e:
            _warn_once(dirname, f"XRDMA_PY_CACHE={dirname}: cannot write an entry ({e.strerror})")
        return meta, image, True
