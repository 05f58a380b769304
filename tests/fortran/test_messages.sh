#!/bin/bash
# The mpix_xrdma module's own refusals say what is wrong: tests/fortran/
# f08_messages on one rank (it prints ok/FAIL per check).
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
read -ra flags <"$src/scripts/mpirun-flags"
timeout -k 5 120 "$src/scripts/mpi-launch" "${flags[@]}" -x UCX_TLS=sm,self -n 1 "$build/tests/fortran/f08_messages" \
    "$build/examples/mpi_f08_ifunc.xfn"
