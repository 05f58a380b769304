"""Functions written in Python at C targets: rank 0 is this test, the other
ranks are tests/python/c_target (plain C, libmpix_xrdma, no Python). Run
with XRDMA_EXEC=target so that the code runs in the C processes (their
JIT compiles the bitcode) rather than at rank 0 on mapped memory."""
import os
import sys

import numpy as np

import xrdma
from mpi4py import MPI

sys.path.insert(0, os.path.join(os.environ["XRDMA_TEST_SRCDIR"], "examples"))
import py_pointer_chase as chase  # noqa: E402  (the list and the Python chase function)


def test_python_function_at_c_targets(comm):
    assert comm.Get_rank() == 0 and comm.Get_size() >= 2
    assert os.environ.get("XRDMA_EXEC") == "target"
    size, npr, depth = comm.Get_size(), 256, 64
    comm.Bcast(np.array([npr], dtype=np.uint64), root=0)
    nxt = chase.build_list(npr * size)
    win = MPI.Win.Allocate((npr + 2) * 8, 8, comm=comm)
    mem = np.frombuffer(win.tomemory(), dtype=np.uint64)
    mem[:npr] = nxt[:npr]
    mem[npr:] = 0
    for r in range(1, size):
        comm.Send(np.ascontiguousarray(nxt[r * npr:(r + 1) * npr]), dest=r, tag=0)
    comm.Barrier()
    fn = chase.compile_chase()
    good = total = 0
    win.Lock_all()
    out = np.zeros(1, dtype=np.uint64)
    for i in range(30):
        start = chase.start_node(i, npr * size)
        node, rem = start, depth
        while rem > 0 and node < npr:
            node, rem = int(mem[node]), rem - 1
        if rem:
            owner = node // npr
            xrdma.xget(win, out, owner, fn, np.array([node, rem, npr], dtype=np.uint64),
                       (0, 0, MPI.UINT64_T))
            win.Flush(owner)
            node = int(out[0])
        total += 1
        good += node == chase.walk(nxt, start, depth)
    win.Unlock_all()
    comm.Barrier()
    counters = np.zeros((size, 2), dtype=np.uint64)
    comm.Gather(np.array([mem[npr], mem[npr + 1]], dtype=np.uint64), counters, root=0)
    fn.free()
    win.Free()
    assert good == total
    # The C ranks ran the Python function (compiled from its bitcode there).
    assert all(counters[r][0] > 0 for r in range(1, size)), counters
