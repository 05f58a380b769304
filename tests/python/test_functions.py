"""Functions written in Python (@xrdma.function): compiled by Numba to LLVM
bitcode at an origin (once for the ranks of the run, through the compile
cache: test_compile_cache.py), shipped in an image, compiled by the
targets' JIT; the exceptions they raise at the targets, back at the
origin."""
import subprocess
import os

import numba
import pytest
from numba import int32, int64, uint64

import xrdma
from mpi4py import MPI
import numpy as np
from xrdma import rt


@xrdma.function
def add_incoming(ctx, args, args_size):
    """Xput: target region += incoming int64s."""
    t, tn = rt.target(ctx)
    d, dn = rt.incoming(ctx)
    if tn != dn:
        return 1
    tv = numba.carray(t, tn // 8, int64)
    dv = numba.carray(d, dn // 8, int64)
    for i in range(tn // 8):
        tv[i] += dv[i]
    return 0


@xrdma.function
def region_stats(ctx, args, args_size):
    """Xget: reply (sum, max, this rank) of the region's int64s, times args[0]."""
    t, tn = rt.target(ctx)
    tv = numba.carray(t, tn // 8, int64)
    k = numba.carray(args, 1, int64)[0]
    s = int64(0)
    m = tv[0]
    for i in range(tn // 8):
        s += tv[i]
        m = max(m, tv[i])
    return rt.reply_value(ctx, (s * k, m, int64(rt.rank(ctx))))


@xrdma.function
def tour(ctx, args, args_size):
    """Xget: visit every rank once, adding window word 0, then reply."""
    a = numba.carray(args, 2, int64)  # (ranks left, total)
    base, n = rt.win_base(ctx)
    w = numba.carray(base, n // 8, int64)
    left = a[0] - 1
    total = a[1] + w[0]
    if left == 0:
        return rt.reply_value(ctx, total)
    return rt.forward_value(ctx, (rt.rank(ctx) + 1) % rt.size(ctx), (left, total))


@xrdma.function(entry="divide")
def divide_by_arg(ctx, args, args_size):
    """Raises ZeroDivisionError in Python for 0: the entry returns an
    exception code, which the origin turns back into the exception."""
    base, n = rt.win_base(ctx)
    w = numba.carray(base, n // 8, int64)
    w[1] = w[1] // numba.carray(args, 1, int64)[0]
    return 0


class BadWord(Exception):
    """Raised by the functions below, at the targets."""


@xrdma.function
def check_words(ctx, args, args_size):
    """Xput: stores the incoming words up to a negative one, which raises
    BadWord (at the line the test checks); a single word raises
    ValueError."""
    t, tn = rt.target(ctx)
    d, dn = rt.incoming(ctx)
    if dn == 8:
        raise ValueError("a single word is not enough")
    tv = numba.carray(t, tn // 8, int64)
    dv = numba.carray(d, dn // 8, int64)
    for i in range(dn // 8):
        if dv[i] < 0:
            raise BadWord("negative word", 7)
        tv[i] = dv[i]
    return 0


@xrdma.function
def tour_then_fail(ctx, args, args_size):
    """Xget: forwarded to the right args[0] times; the last rank raises."""
    a = numba.carray(args, 1, int64)
    if a[0] > 0:
        return rt.forward_value(ctx, (rt.rank(ctx) + 1) % rt.size(ctx), a[0] - 1)
    raise KeyError("the end of the tour")


@xrdma.function
def return_minus_seven(ctx, args, args_size):
    return -7


def right(comm):
    return (comm.Get_rank() + 1) % comm.Get_size()


def test_image_accepted_by_the_c_reader():
    for f in (add_incoming, region_stats, tour, divide_by_arg, check_words, tour_then_fail):
        assert xrdma.image.check(f.image, f.entry) is None
        assert f.triple == "x86_64-linux-gnu" or f.triple.endswith("-linux-gnu")
        assert f.image[:8] == b"XRDMAIMG"
    assert divide_by_arg.entry == "divide"
    assert set(region_stats.imports) == {"xrdma_target", "xrdma_reply", "xrdma_rank"}
    # Damage is seen by the reader (the hash covers every byte).
    bad = bytearray(tour.image)
    bad[-1] ^= 1
    assert xrdma.image.check(bytes(bad), "tour") is not None


def test_saved_image_loads(tmp_path):
    p = tmp_path / "tour.xfn"
    tour.save(str(p))
    loaded = xrdma.load(str(p), "tour")
    assert loaded.handle
    loaded.free()


def test_python_functions_run_at_the_targets(comm, win):
    w, mem = win
    t = right(comm)
    data = np.arange(4, dtype=np.int64) + 1000
    xrdma.xput(w, data, t, add_incoming, target=(8, 4, MPI.INT64_T))
    w.Flush(t)
    out = np.zeros(3, dtype=np.int64)
    xrdma.xget(w, out, t, region_stats, args=np.int64(3), target=(8, 4, MPI.INT64_T))
    w.Flush(t)
    region = [100 * t + 8 + i + 1000 + i for i in range(4)]
    assert list(out) == [3 * sum(region), max(region), t]
    comm.Barrier()


def test_forwarding_python_function(comm, win):
    w, mem = win
    out = np.zeros(1, dtype=np.int64)
    xrdma.xget(w, out, right(comm), tour, args=np.array([comm.Get_size(), 0], dtype=np.int64),
               target=(0, 0, MPI.INT64_T))
    w.Flush(right(comm))
    assert out[0] == sum(100 * r for r in range(comm.Get_size()))


def test_python_exception_reaches_the_origin(comm, win):
    # Xinvoke, through a request: the type, message and raising rank of the
    # Python exception, which becomes the cause.
    w, mem = win
    t = right(comm)
    xrdma.xinvoke(w, divide_by_arg, t, args=np.int64(2))
    w.Flush(t)
    req = xrdma.rxinvoke(w, divide_by_arg, t, args=np.int64(0))
    with pytest.raises(xrdma.IfuncRaisedError) as e:
        req.Wait()
    assert isinstance(e.value, xrdma.IfuncReturnError) and isinstance(e.value, MPI.Exception)
    assert e.value.exc_type is ZeroDivisionError and e.value.exc_type_name == "ZeroDivisionError"
    assert e.value.rank == t and e.value.entry == "divide"
    assert "raised ZeroDivisionError: integer division by zero" in str(e.value)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert "ifunc 'divide'" in e.value.Get_error_string()  # XRDMA's own message stays
    comm.Barrier()
    w.Sync()
    assert mem[1] == (100 * comm.Get_rank() + 1) // 2    # the target kept serving
    assert divide_by_arg.exceptions[0].type_name == "ZeroDivisionError"
    assert "xrdma_log" in divide_by_arg.imports           # printed at the target too


def test_python_exception_of_an_xput(comm, win):
    # Through mpi4py's Flush: translate() gives the exception of this
    # module's class, its arguments and the line that raised it.
    w, mem = win
    t = right(comm)
    xrdma.xput(w, np.array([5, -1], dtype=np.int64), t, check_words, target=(20, 2, MPI.INT64_T))
    with pytest.raises(MPI.Exception) as e:
        w.Flush(t)
    got = xrdma.translate(e.value)
    assert isinstance(got, xrdma.IfuncRaisedError)
    assert got.exc_type is BadWord and got.exc_args == ("negative word", 7)
    line = next(i for i, text in enumerate(open(__file__), 1) if 'raise BadWord("negative word", 7)' in text)
    assert got.where == f"{__file__}, line {line}"
    assert f"BadWord: negative word, 7 ({__file__}, line {line})" in str(got)
    # Another exception of the same function, from an Xget through a request.
    req = xrdma.rxput(w, np.array([1], dtype=np.int64), t, check_words, target=22)
    with pytest.raises(xrdma.IfuncRaisedError) as e2:
        req.Wait()
    assert e2.value.exc_type is ValueError and "raised ValueError: a single word is not enough" in str(e2.value)
    comm.Barrier()
    w.Sync()
    assert mem[20] == 5 and mem[21] == 100 * comm.Get_rank() + 21  # stored up to the bad word
    assert mem[22] == 100 * comm.Get_rank() + 22                     # the second call stored nothing


def test_python_exception_after_forwarding(comm, win):
    # The rank that raised answers the origin directly, after the hops.
    w, mem = win
    hops = comm.Get_size()
    out = np.zeros(1, dtype=np.int64)
    req = xrdma.rxget(w, out, right(comm), tour_then_fail, args=np.int64(hops), target=(0, 0, MPI.INT64_T))
    with pytest.raises(xrdma.IfuncRaisedError) as e:
        req.Wait()
    assert e.value.exc_type is KeyError and e.value.exc_args == ("the end of the tour",)
    assert e.value.rank == (comm.Get_rank() + 1 + hops) % comm.Get_size()


def test_returned_values_are_not_exceptions(comm, win):
    w, mem = win
    req = xrdma.rxinvoke(w, return_minus_seven, right(comm))
    with pytest.raises(xrdma.IfuncReturnError) as e:
        req.Wait()
    assert type(e.value) is xrdma.IfuncReturnError and "returned -7" in str(e.value)
    assert return_minus_seven.exceptions == [] and "xrdma_log" not in return_minus_seven.imports


def test_refused_symbols_are_reported():
    def allocates(ctx, args, args_size):
        a = np.zeros(4, dtype=np.int64)  # Numba's runtime allocator: not at a target
        return int32(a.sum())
    with pytest.raises(xrdma.CompileError) as e:
        xrdma.function(allocates)
    assert "NRT_" in str(e.value)

    def untyped(ctx, args, args_size):
        return "a string"
    with pytest.raises(xrdma.CompileError):
        xrdma.function(untyped)

    # An entry is a C name: a lambda's is not (named by entry=, it is fine).
    with pytest.raises(xrdma.CompileError) as e:
        xrdma.function(lambda ctx, args, args_size: int32(0))
    assert "entry name" in str(e.value)
    assert xrdma.function(entry="zero")(lambda ctx, args, args_size: int32(0)).entry == "zero"


def test_every_rank_compiles_the_same_image(comm, monkeypatch):
    # Without the compile cache, each rank compiles its own copy; a target
    # caches code by the image's hash, so the copies must be byte for byte
    # the same, however many functions the process compiled before (Numba
    # numbers them), and whatever Numba named its exception constants
    # after, or a target would load and JIT-compile one copy per origin
    # (and ranks on other nodes compile their own).
    monkeypatch.setenv("XRDMA_PY_CACHE", "off")

    def first(ctx, args, args_size):
        return int32(args_size)
    if comm.Get_rank() % 2:
        xrdma.function(first)
    for f in (tour, divide_by_arg, check_words):
        again = xrdma.function(f.py_function, entry=f.entry)
        assert again.compiled_here and again.cache_path is None
        assert again.image == f.image
        images = comm.allgather(again.image)
        assert all(i == f.image for i in images)
    # The compile time is measured (a figure, not a limit: benchmarks report it).
    assert isinstance(tour.compile_seconds, float) and tour.compile_seconds > 0
