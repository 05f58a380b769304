"""Writing XRDMA images (the format of xrdma-image(5)) from Python.

The C writer (ucx_plugin/image/image.cc) is internal to libucx_ifunc, so this is
the same layout written here: a 64-byte header (magic "XRDMAIMG", version 1,
total size, counts, SHA-256 of the image with the hash field zeroed), the
entry table (8 bytes each), the part table (32 bytes each), the names and
triples, then each part's data aligned to 16 bytes. check() runs the C
reader (ucx_ifunc_image_check) over the result; the tests do so for every
image this module writes."""
import ctypes
import hashlib
import re
import struct

MAGIC = b"XRDMAIMG"
VERSION = 1
HEADER = 64
KIND_NATIVE, KIND_BITCODE = 1, 2
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}\Z")
_TRIPLE = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")


def _entry_name_ok(name):
    """Whether @p name may be an entry: a C identifier of 1 to 255 bytes (the
    package's rule, not part of its API)."""
    return bool(_IDENT.match(name))


def build(entries, parts):
    """The image bytes for @p entries (names) and @p parts, a list of
    (kind, triple, data bytes)."""
    if not 1 <= len(entries) <= 256 or len(set(entries)) != len(entries):
        raise ValueError("xrdma image: 1 to 256 distinct entries")
    if not 1 <= len(parts) <= 64:
        raise ValueError("xrdma image: 1 to 64 parts")
    for e in entries:
        if not _entry_name_ok(e):
            raise ValueError(f"xrdma image: entry {e!r} is not a C identifier of 1 to 255 bytes")
    for _, triple, _ in parts:
        if not _TRIPLE.match(triple):
            raise ValueError(f"xrdma image: bad triple {triple!r}")
    tables_end = HEADER + 8 * len(entries) + 32 * len(parts)
    strings = bytearray()
    entry_tab = bytearray()
    for e in entries:
        b = e.encode()
        entry_tab += struct.pack("<II", tables_end + len(strings), len(b))
        strings += b
    triple_at = []
    for _, triple, _ in parts:
        b = triple.encode()
        triple_at.append((tables_end + len(strings), len(b)))
        strings += b
    body = bytearray()
    pos = tables_end + len(strings)
    part_tab = bytearray()
    for (kind, _, data), (toff, tlen) in zip(parts, triple_at):
        pad = -pos % 16
        body += b"\0" * pad
        pos += pad
        part_tab += struct.pack("<IIIIQQ", kind, 0, toff, tlen, pos, len(data))
        body += data
        pos += len(data)
    header = struct.pack("<8sHHIQII32s", MAGIC, VERSION, HEADER, 0, pos, len(entries), len(parts), b"\0" * 32)
    image = bytearray(header + entry_tab + part_tab + strings + body)
    assert len(image) == pos
    image[32:64] = hashlib.sha256(image).digest()
    return bytes(image)


def parts(image):
    """[(kind, triple, data bytes)] of an image that check() accepted."""
    _, _, _, _, _, n_entries, n_parts, _ = struct.unpack_from("<8sHHIQII32s", image, 0)
    out = []
    for i in range(n_parts):
        kind, _, toff, tlen, off, size = struct.unpack_from("<IIIIQQ", image, HEADER + 8 * n_entries + 32 * i)
        out.append((kind, image[toff:toff + tlen].decode(), bytes(image[off:off + size])))
    return out


def check(image, entry=None):
    """Validate @p image with XRDMA's C reader: None if it is accepted, else
    the reader's reason. Needs libucx_ifunc (loaded by import xrdma)."""
    from . import _lib
    why = ctypes.create_string_buffer(256)
    got = ctypes.create_string_buffer(256)
    st = _lib.ucx_ifunc_image_check(bytes(image), len(image), entry.encode() if entry else None, got, 256, why, 256)
    return None if st == 0 else (why.value.decode() or f"status {st}")
