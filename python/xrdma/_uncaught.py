"""An uncaught exception ends the whole MPI job, not one rank of it.

A rank that dies of an exception (a load that failed, say) runs MPI_Finalize
on its way out (mpi4py registers it), and Open MPI's MPI_Finalize waits for
every rank, while the others wait for the dead one in their next collective
or flush: the job hangs, both sides waiting. As `python -m mpi4py` does, this
hook prints the traceback as usual, then, in a job of more than one process,
calls MPI_Abort, so that mpirun ends every rank with a non-zero status. A
single process exits as Python does."""
import sys

_previous = sys.excepthook


def _hook(kind, value, tb):
    _previous(kind, value, tb)
    MPI = sys.modules.get("mpi4py.MPI")  # (not imported here: no MPI, nothing to end)
    try:
        if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(1)
    except Exception:  # the traceback is out; nothing better to do
        pass


sys.excepthook = _hook
