"""examples/py_pointer_chase.py as a test: the chase function written in
Python against the C image and an mpi4py Win.Get chain, every answer
checked (small sizes)."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ["XRDMA_TEST_SRCDIR"], "examples"))
import py_pointer_chase  # noqa: E402


def test_chase():
    assert py_pointer_chase.main(["-n", "512", "-d", "64", "-r", "20", "-w", "2"]) == 0
