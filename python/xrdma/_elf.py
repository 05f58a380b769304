"""The libraries an ELF shared object needs (its DT_NEEDED entries), read
from the file without loading it: which MPI library an mpi4py was built
against can be told before it is imported (_interpreter.py)."""
import struct

_DT_NEEDED, _SHT_DYNAMIC = 1, 6


def needed(path):
    """The DT_NEEDED names of the ELF file @p path; [] for a file that is
    not ELF or cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] not in (1, 2) or data[5] not in (1, 2):
        return []
    wide, end = data[4] == 2, "<" if data[5] == 1 else ">"
    try:
        if wide:
            shoff, = struct.unpack_from(end + "Q", data, 0x28)
            shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
            sec, dyn = end + "IIQQQQIIQQ", end + "qQ"
        else:
            shoff, = struct.unpack_from(end + "I", data, 0x20)
            shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
            sec, dyn = end + "IIIIIIIIII", end + "iI"
        sections = [struct.unpack_from(sec, data, shoff + i * shentsize) for i in range(shnum)]
        names = []
        for s in sections:
            if s[1] != _SHT_DYNAMIC:
                continue
            off, size, link = s[4], s[5], s[6]
            strtab = sections[link][4]
            step = struct.calcsize(dyn)
            for at in range(off, off + size - step + 1, step):
                tag, val = struct.unpack_from(dyn, data, at)
                if tag == 0:
                    break
                if tag == _DT_NEEDED:
                    stop = data.index(b"\0", strtab + val)
                    names.append(data[strtab + val:stop].decode("utf-8", "replace"))
        return names
    except (struct.error, IndexError, ValueError):
        return []
