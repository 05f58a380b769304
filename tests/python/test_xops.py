"""xput / xget / xinvoke and their request variants on mpi4py windows with
C images (tests/mpi/ifuncs/mpi_ops.c), image loading and errors."""
import os

import pytest

import xrdma
from mpi4py import MPI
import numpy as np


def right(comm):
    return (comm.Get_rank() + 1) % comm.Get_size()


def left(comm):
    return (comm.Get_rank() - 1) % comm.Get_size()


def test_xput_accumulate_and_xget_sum(comm, win, images):
    w, mem = win
    acc = xrdma.load(os.path.join(images, "mpi_ops.xfn"), "accumulate")
    ssum = xrdma.load(os.path.join(images, "mpi_ops.xfn"), "sum")
    t = right(comm)
    data = np.arange(8, dtype=np.int64) * (comm.Get_rank() + 1)
    xrdma.xput(w, data, t, acc, target=4)          # words 4..11 at t += data
    w.Flush(t)
    comm.Barrier()
    w.Sync()
    l = left(comm)
    expect = 100 * comm.Get_rank() + np.arange(4, 12) + np.arange(8) * (l + 1)
    assert (mem[4:12] == expect).all()
    assert mem[3] == 100 * comm.Get_rank() + 3 and mem[12] == 100 * comm.Get_rank() + 12
    comm.Barrier()
    out = np.zeros(1, dtype=np.int64)
    xrdma.xget(w, out, t, ssum, target=(0, 16, MPI.INT64_T))
    w.Flush(t)
    assert out[0] == sum(100 * t + i for i in range(16)) + sum(i * (comm.Get_rank() + 1) for i in range(8))
    acc.free()
    ssum.free()


def test_request_variants(comm, win, images):
    w, mem = win
    path = os.path.join(images, "mpi_ops.xfn")
    with open(path, "rb") as f:
        ssum = xrdma.load_mem(f.read(), "sum")      # the bytes are copied
    bump = xrdma.load(path, "bump")
    t = right(comm)
    req = xrdma.rxinvoke(w, bump, t, args=np.int64(5))
    assert isinstance(req, MPI.Request)
    req.Wait()
    comm.Barrier()
    w.Sync()
    assert mem[0] == 100 * comm.Get_rank() + 5
    comm.Barrier()
    out = np.zeros(1, dtype=np.int64)
    xrdma.rxget(w, out, t, ssum, target=(1, 3, MPI.INT64_T)).Wait()
    assert out[0] == sum(100 * t + i for i in (1, 2, 3))
    data = np.full(2, 7, dtype=np.int64)
    acc = xrdma.load(path, "accumulate")
    xrdma.rxput(w, data, t, acc, target=(60, 2, MPI.INT64_T)).Wait()
    xrdma.xinvoke(w, bump, t)                        # args: none -> adds 1
    w.Flush(t)
    comm.Barrier()
    w.Sync()
    assert list(mem[60:62]) == [100 * comm.Get_rank() + 67, 100 * comm.Get_rank() + 68]
    assert mem[0] == 100 * comm.Get_rank() + 6
    for f in (ssum, bump, acc):
        f.free()


def test_plain_get_without_code(comm, win):
    w, mem = win
    t = right(comm)
    out = np.zeros(4, dtype=np.int64)
    xrdma.xget(w, out, t, None, target=10)
    w.Flush(t)
    assert list(out) == [100 * t + i for i in range(10, 14)]


def test_function_error_raises_subclass(comm, win, images):
    w, mem = win
    fail = xrdma.load(os.path.join(images, "mpi_ops.xfn"), "fail_with")
    t = right(comm)
    req = xrdma.rxinvoke(w, fail, t, args=np.int32(9))
    with pytest.raises(xrdma.IfuncReturnError) as e:
        req.Wait()
    assert isinstance(e.value, MPI.Exception)
    assert e.value.Get_error_class() == xrdma._lib.error_class("MPIX_ERR_IFUNC_RETURN")
    assert "returned 9" in str(e.value)
    # Through mpi4py's own Flush: a plain MPI.Exception, translated on demand.
    xrdma.xinvoke(w, fail, t, args=np.int32(4))
    with pytest.raises(MPI.Exception) as e:
        w.Flush(t)
    assert isinstance(xrdma.translate(e.value), xrdma.IfuncReturnError)
    fail.free()


def test_load_errors(comm, images, tmp_path):
    with pytest.raises(MPI.Exception) as e:
        xrdma.load(os.path.join(images, "no_such_image.xfn"))
    assert "no_such_image" in str(e.value.Get_error_string())
    with pytest.raises(xrdma.IfuncImageError) as e:
        xrdma.load_mem(b"XRDMAIMG" + b"\0" * 100)
    with pytest.raises(xrdma.IfuncImageError):
        xrdma.load(os.path.join(images, "mpi_ops.xfn"), "no_such_entry")


def test_empty_image(comm, tmp_path):
    """An empty file or empty bytes: the image class, and the message is
    text (mpi4py decodes it for str(e)) that ends where it should."""
    empty = tmp_path / "empty.xfn"
    empty.write_bytes(b"")
    with pytest.raises(xrdma.IfuncImageError) as e:
        xrdma.load(empty)
    assert str(e.value) == f"MPIX_Ifunc_load: {empty}: empty file"
    assert e.value.Get_error_class() == xrdma._lib.error_class("MPIX_ERR_IFUNC_IMAGE")
    with pytest.raises(xrdma.IfuncImageError) as e:
        xrdma.load_mem(b"")
    assert str(e.value) == "MPIX_Ifunc_load: image in memory: the image is empty (0 bytes)"


def test_error_string_not_utf8(comm):
    """str(e) never raises, even for an error string that is not UTF-8 (set
    here through the C API: mpi4py only takes str)."""
    code = MPI.Add_error_code(xrdma._lib.error_class("MPIX_ERR_IFUNC_IMAGE"))
    assert xrdma._lib.core.MPI_Add_error_string(code, b"bad \xff\xfe bytes") == MPI.SUCCESS
    with pytest.raises(UnicodeDecodeError):
        MPI.Exception(code).Get_error_string()     # what mpi4py does with it
    assert str(xrdma.IfuncImageError(code)) == "bad \ufffd\ufffd bytes"


def test_bad_arguments(comm, win, images):
    w, _ = win
    acc = xrdma.load(os.path.join(images, "mpi_ops.xfn"), "accumulate")
    with pytest.raises(ValueError):
        xrdma.xput(w, np.arange(16, dtype=np.int64)[::2], right(comm), acc)  # strided
    with pytest.raises(ValueError):
        xrdma.xget(w, b"\0" * 8, right(comm), None)                           # read-only
    with pytest.raises(TypeError):
        xrdma.xinvoke(w, "accumulate", right(comm))
    with pytest.raises(MPI.Exception) as e:
        xrdma.xinvoke(w, acc, comm.Get_size() + 3)
    assert e.value.Get_error_class() == MPI.ERR_RANK
    acc.free()
