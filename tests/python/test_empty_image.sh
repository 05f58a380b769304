#!/bin/bash
# An empty image loaded from Python and not caught: the traceback ends with
# the image class and "empty file" (str(e) is text), and the job ends with a
# non-zero status instead of hanging in MPI_Finalize: one process alone, the
# exception in every rank, and in one rank while the other waits in a
# barrier (xrdma/_uncaught.py aborts the job). The timeout only detects a
# hang: each run ends in about a second.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
python=${XRDMA_TEST_PYTHON:?}
read -ra flags <"$src/scripts/mpirun-flags"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
env=(-x UCX_TLS=sm,self -x XRDMA_LIBDIR="$build/.libs" -x PYTHONPATH="$src/python")
# A sanitizer build's libraries need its runtime first (tests/python/run-pytest).
rt=$(ldd "$build/tests/python/c_target" 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
[ -n "$rt" ] && env+=(-x LD_PRELOAD="$rt")
: >"$tmp/empty.xfn"
cat >"$tmp/load_empty.py" <<'PY'
import sys
import xrdma
from mpi4py import MPI
comm = MPI.COMM_WORLD
if sys.argv[1] == "all" or comm.Get_rank() == 0:
    xrdma.load(sys.argv[2])
comm.Barrier()
PY
fail=0
for case in "1 all" "2 all" "2 one"; do
    read -r np who <<<"$case"
    # Each rank's output to its own file: the abort notice mpirun prints
    # may otherwise cut into a traceback line.
    rm -rf "$tmp/ranks"
    timeout -k 5 60 mpirun "${flags[@]}" "${env[@]}" --output-filename "$tmp/ranks" -n "$np" "$python" \
        "$tmp/load_empty.py" "$who" "$tmp/empty.xfn" >"$tmp/out" 2>&1
    rc=$?
    what="$np rank(s), exception in $who"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "FAIL - $what: hung (killed after 60 s)"; fail=1
    elif [ $rc -eq 0 ]; then
        echo "FAIL - $what: exit status 0"; fail=1
    elif ! grep -qx "xrdma.errors.IfuncImageError: MPIX_Ifunc_load: $tmp/empty.xfn: empty file" \
            "$tmp"/ranks/1/rank.*/stderr || grep -q "UnicodeDecodeError" "$tmp"/ranks/1/rank.*/stderr; then
        echo "FAIL - $what: not the message"; fail=1
    else
        echo "ok - $what: IfuncImageError 'empty file', the job ended (status $rc)"
        continue
    fi
    cat "$tmp/out" "$tmp"/ranks/1/rank.*/stderr
done
exit $fail
