"""Shared by the xrdma Python tests, which run under mpirun (every rank runs
the same tests, in the same order: they are collective)."""
import os

import pytest

import xrdma  # before mpi4py.MPI
from mpi4py import MPI
import numpy as np


@pytest.fixture(scope="session")
def comm():
    return MPI.COMM_WORLD


@pytest.fixture(scope="session")
def images():
    """Where the C images of the build tree are (tests/mpi/ifuncs/*.xfn)."""
    return os.path.join(os.environ["XRDMA_TEST_BUILDDIR"], "tests", "mpi", "ifuncs")


@pytest.fixture
def win(comm):
    """A window of 64 int64 words per rank, word i = 100 * rank + i, locked
    for all (passive target), freed after the test."""
    w = MPI.Win.Allocate(64 * 8, 8, comm=comm)
    mem = np.frombuffer(w.tomemory(), dtype=np.int64)
    mem[:] = 100 * comm.Get_rank() + np.arange(64)
    comm.Barrier()
    w.Lock_all()
    yield w, mem
    w.Unlock_all()
    comm.Barrier()
    w.Free()
