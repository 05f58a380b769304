#!/bin/bash
# The Python package installed (make install DESTDIR=...): xrdma/ in
# lib/pythonX.Y/site-packages with _config.py naming the libdir; a 2-rank
# mpi4py program imports it from there, ships an xrdma-cc image and a
# function written in Python, and checks the answers.
. "${XRDMA_TEST_SRCDIR:?}/tests/install/stage-install.sh"
python=${XRDMA_TEST_PYTHON:?}
libdir=$(sed -n 's/^libdir = //p' "$build/Makefile" | sed "s|\${exec_prefix}|$prefix|")
site=$(ls -d "$root"/lib/python3*/site-packages 2>/dev/null | head -1)
check "[ -n '$site' ] && [ -f '$site/xrdma/__init__.py' ] && [ -f '$site/xrdma/compiler.py' ]" \
      "installed lib/python3.N/site-packages/xrdma"
check "grep -q 'LIBDIR = \"$libdir\"' '$site/xrdma/_config.py'" "_config.py names the installed libdir"
check "grep -q 'PYTHON = \"$python\"' '$site/xrdma/_config.py'" "... and the Python it was built for"
check "[ -f '$site/xrdma/cache.py' ] && [ -f '$site/xrdma/_interpreter.py' ]" "... with the compile cache and interpreter check"
cat >"$stage/app.py" <<'PY'
import sys
import xrdma
from mpi4py import MPI
import numba, numpy as np
from numba import int64
from xrdma import rt

@xrdma.function
def twice_sum(ctx, args, args_size):
    p, n = rt.target(ctx)
    v = numba.carray(p, n // 8, int64)
    s = int64(0)
    for i in range(n // 8):
        s += v[i]
    return rt.reply_value(ctx, 2 * s)

comm = MPI.COMM_WORLD
t = (comm.rank + 1) % comm.size
win = MPI.Win.Allocate(8 * 8, 8, comm=comm)
np.frombuffer(win.tomemory(), dtype=np.int64)[:] = np.arange(8) + 10 * comm.rank
comm.Barrier()
csum = xrdma.load(sys.argv[1], "sum")
win.Lock_all()
out = np.zeros(2, dtype=np.int64)
xrdma.xget(win, out[0:1], t, twice_sum, target=(0, 8, MPI.INT64_T))
xrdma.xget(win, out[1:2], t, csum, target=(0, 8, MPI.INT64_T))
win.Flush(t)
win.Unlock_all()
want = sum(range(8)) + 80 * t
ok = comm.allreduce(int(out[0] == 2 * want and out[1] == want), op=MPI.MIN)
if comm.rank == 0:
    print("answers checked:", "ok" if ok else "FAILED", list(out), want)
comm.Barrier()
csum.free()
win.Free()
PY
read -ra flags <"$src/scripts/mpirun-flags"
preload=()
rt=$(ldd "$build/tests/python/c_target" 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
[ -n "$rt" ] && preload=(-x LD_PRELOAD="$rt")
cd "$stage" || exit 1
# The libraries are staged, not where _config.py and their run paths say:
# XRDMA_LIBDIR and LD_LIBRARY_PATH point there.
export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
check "timeout -k 5 120 mpirun ${flags[*]} ${preload[*]} -x UCX_TLS=sm,self -x LD_LIBRARY_PATH -x XRDMA_LIBDIR='$root/lib' \
       -x PYTHONPATH='$site' -x NUMBA_CACHE_DIR='$stage' -x XRDMA_PY_CACHE='$stage/py-cache' -n 2 '$python' app.py '$build/tests/mpi/ifuncs/mpi_ops.xfn' \
       >run.log 2>&1 && grep -q 'answers checked: ok' run.log || { cat run.log; false; }" \
      "an mpi4py program runs with the installed package"
exit $fail
