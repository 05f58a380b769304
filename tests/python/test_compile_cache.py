"""The compile cache of functions written in Python (XRDMA_PY_CACHE): the
ranks of a node that define the same function at once compile it once,
ranks that define it alone do not wait for the others, a damaged entry is
rebuilt, and the functions' answers stay right. Each test has a cache
directory of its own, shared by the ranks (they run on one node)."""
import ctypes
import os
import shutil
import struct
import tempfile
import types

import numba
import pytest
from numba import int64

import xrdma
from mpi4py import MPI
import numpy as np
from xrdma import cache, compiler, fingerprint, rt

SCALE = 3  # read by scaled_sum: Numba freezes it into the image


def scaled_sum(ctx, args, args_size):
    """Xget: reply SCALE * (sum of the region's int64s) + args[0]."""
    t, tn = rt.target(ctx)
    v = numba.carray(t, tn // 8, int64)
    s = int64(0)
    for i in range(tn // 8):
        s += v[i]
    return rt.reply_value(ctx, SCALE * s + numba.carray(args, 1, int64)[0])


def right(comm):
    return (comm.Get_rank() + 1) % comm.Get_size()


@pytest.fixture
def cache_dir(comm, monkeypatch):
    """A new cache directory for this test, the same for every rank."""
    path = tempfile.mkdtemp(dir=os.environ.get("TMPDIR", "/tmp"), prefix="xrdma-py-cache-") \
        if comm.Get_rank() == 0 else None
    path = comm.bcast(path, root=0)
    monkeypatch.setenv("XRDMA_PY_CACHE", path)
    yield path
    comm.Barrier()
    if comm.Get_rank() == 0:
        shutil.rmtree(path)


def compiles(comm, f):
    """How many ranks ran the compile of @p f (each rank passes its own)."""
    return comm.allreduce(int(f is not None and f.compiled_here), op=MPI.SUM)


def expect_answer(comm, win, f, scale):
    """@p f at the right neighbour answers scale * sum + 5."""
    w, mem = win
    t = right(comm)
    out = np.zeros(1, dtype=np.int64)
    xrdma.xget(w, out, t, f, args=np.int64(5), target=(2, 4, MPI.INT64_T))
    w.Flush(t)
    assert out[0] == scale * sum(100 * t + i for i in range(2, 6)) + 5


def test_all_ranks_at_once_compile_once(comm, win, cache_dir):
    comm.Barrier()
    f = xrdma.function(scaled_sum)
    assert compiles(comm, f) == 1
    assert f.cache_path and os.path.dirname(f.cache_path) == cache_dir and os.path.exists(f.cache_path)
    assert all(i == f.image for i in comm.allgather(f.image))
    expect_answer(comm, win, f, 3)
    f.free()
    # Defined again, by this or another process of the node: read, not compiled.
    g = xrdma.function(scaled_sum)
    assert compiles(comm, g) == 0 and g.image == f.image
    g.free()


def test_some_ranks_alone(comm, win, cache_dir):
    # A compile is not collective: the even ranks define the function while
    # the odd ones do something else, and none waits for a rank that is not
    # compiling it.
    f = xrdma.function(scaled_sum) if comm.Get_rank() % 2 == 0 else None
    assert compiles(comm, f) == 1
    comm.Barrier()
    if f is None:
        f = xrdma.function(scaled_sum)
        assert not f.compiled_here
    expect_answer(comm, win, f, 3)
    f.free()


def _damage(path, how):
    with open(path, "rb") as fh:
        data = fh.read()
    meta, image = cache.decode(data, os.path.basename(path)[:-len(".xpyf")], lambda m, i: True)
    if how == "flipped byte":
        data = bytearray(data)
        data[-10] ^= 0x40
    elif how == "truncated":
        data = data[:len(data) // 2]
    elif how == "empty":
        data = b""
    elif how == "garbage":
        data = os.urandom(len(data))
    elif how == "another key":
        data = cache.encode(dict(meta, key="0" * 64), image)
    elif how == "damaged image, good checksum":
        bad = bytearray(image)
        bad[len(bad) // 2] ^= 1
        data = cache.encode(meta, bytes(bad))
    elif how == "older format":
        data = data[:8] + struct.pack("<I", cache.VERSION + 1) + data[12:]
    elif how == "bad metadata":
        data = cache.encode(dict(meta, exceptions="none"), image)
    with open(path, "wb") as fh:
        fh.write(data)


@pytest.mark.parametrize("how", ["flipped byte", "truncated", "empty", "garbage", "another key",
                                 "damaged image, good checksum", "older format", "bad metadata"])
def test_damaged_entry_is_rebuilt(comm, win, cache_dir, how):
    first = xrdma.function(scaled_sum) if comm.Get_rank() == 0 else None
    path = comm.bcast(first.cache_path if first else None, root=0)
    if comm.Get_rank() == 0:
        _damage(path, how)
        assert cache._read(path, os.path.basename(path)[:-5], lambda m, i: True) is None or how == "bad metadata"
    comm.Barrier()
    f = xrdma.function(scaled_sum)
    assert compiles(comm, f) == 1            # one rank rebuilt it, the others read that
    with open(path, "rb") as fh:
        assert cache.decode(fh.read(), os.path.basename(path)[:-5], lambda m, i: True) is not None
    assert all(i == f.image for i in comm.allgather(f.image))
    expect_answer(comm, win, f, 3)
    f.free()
    if first:
        first.free()


def test_what_the_function_reads_is_in_the_key(comm, win, cache_dir):
    global SCALE
    f3 = xrdma.function(scaled_sum)
    try:
        SCALE = 4
        f4 = xrdma.function(scaled_sum)
        assert compiles(comm, f4) == 1 and f4.cache_path != f3.cache_path
        SCALE = 3
        again = xrdma.function(scaled_sum)
        assert compiles(comm, again) == 0 and again.image == f3.image
    finally:
        SCALE = 3
    expect_answer(comm, win, f4, 4)
    expect_answer(comm, win, again, 3)
    for f in (f3, f4, again):
        f.free()


_labs = ctypes.CDLL("libc.so.6").labs
_labs.restype, _labs.argtypes = ctypes.c_long, [ctypes.c_long]


def test_unkeyable_function_is_not_cached(comm, cache_dir):
    # A ctypes function is compiled in as its address in this process: such
    # a function is compiled by each process, never shared.
    def calls_ctypes(ctx, args, args_size):
        return numba.int32(_labs(-3) - 3)
    f = xrdma.function(calls_ctypes)
    assert f.compiled_here and f.cache_path is None and "_FuncPtr" in f.uncached_because
    assert os.listdir(cache_dir) == []


def test_default_directory(comm, cache_dir, monkeypatch):
    # Without the knob: $XDG_CACHE_HOME/xrdma/python, made private.
    monkeypatch.delenv("XRDMA_PY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", cache_dir)
    f = xrdma.function(scaled_sum)
    assert compiles(comm, f) == 1
    assert os.path.dirname(f.cache_path) == os.path.join(cache_dir, "xrdma", "python")
    assert os.stat(os.path.dirname(f.cache_path)).st_mode & 0o777 == 0o700


def test_cache_off_and_unusable(comm, monkeypatch, tmp_path):
    monkeypatch.setenv("XRDMA_PY_CACHE", "off")
    f = xrdma.function(scaled_sum)
    assert compiles(comm, f) == comm.Get_size() and f.cache_path is None
    # A directory other users may write is not used (they could plant code).
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("XRDMA_PY_CACHE", str(shared))
    with pytest.warns(RuntimeWarning, match="writable by others"):
        g = xrdma.function(scaled_sum)
    assert g.compiled_here and g.cache_path is None and os.listdir(shared) == []


def _reads(ctx, args, args_size):
    """(Given its globals mod and helper by the test below.)"""
    return numba.int32(helper(mod.K))  # noqa: F821


def test_key_covers_what_numba_freezes():
    # Module attributes, the functions called and closure values are
    # compiled in as they are: each is part of the key.
    mod = types.ModuleType("xrdma_test_constants")
    mod.K = 2
    plus_one, plus_two = numba.njit(lambda x: x + 1), numba.njit(lambda x: x + 2)
    f = types.FunctionType(_reads.__code__, {"numba": numba, "mod": mod, "helper": plus_one})

    def key(fn):
        return fingerprint.key(fn, "reads", compiler.SIGNATURE, "x86_64-unknown-linux-gnu")
    first = key(f)
    assert key(f) == first
    mod.K = 3
    assert key(f) != first
    mod.K = 2
    assert key(f) == first
    assert key(types.FunctionType(_reads.__code__, {"numba": numba, "mod": mod, "helper": plus_two})) != first

    def closure(n):
        def g(ctx, args, args_size):
            return numba.int32(n)
        return g
    assert key(closure(1)) != key(closure(2)) and key(closure(1)) == key(closure(1))
