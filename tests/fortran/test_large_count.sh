#!/bin/bash
# Fortran windows made by MPI-4's large-count calls have X-operations:
# tests/fortran/f08_large_count on 2 ranks (it prints ok/FAIL per check).
# MPICH builds only (tests/fortran/local.mk): Open MPI 4.1's mpi_f08 has none.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
read -ra flags <"$src/scripts/mpirun-flags"
timeout -k 5 120 "$src/scripts/mpi-launch" "${flags[@]}" -x UCX_TLS=sm,self -n 2 "$build/tests/fortran/f08_large_count" \
    "$build/examples/mpi_f08_ifunc.xfn"
