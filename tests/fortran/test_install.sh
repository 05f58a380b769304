#!/bin/bash
# The Fortran module installed (make install DESTDIR=...): mpix_xrdma.mod in
# include/, libmpix_xrdma_f08.so the linker script, the man page; a program
# builds against the staged tree with mpifort -lmpix_xrdma_f08 and runs.
. "${XRDMA_TEST_SRCDIR:?}/tests/install/stage-install.sh"
check "[ -f '$root/include/mpix_xrdma.mod' ]" "installed include/mpix_xrdma.mod"
check "head -c 20 '$root/lib/libmpix_xrdma_f08.so' | grep -q 'GNU ld script'" "libmpix_xrdma_f08.so is a linker script"
check "MANWIDTH=80 man -l '$root/share/man/man3/mpix_xrdma_f08.3' 2>/dev/null | grep -q mpi_f08" \
      "man page mpix_xrdma_f08(3) renders"
export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd "$stage" || exit 1
# What the README says: mpifort -I$prefix/include app.f90 -L$prefix/lib -lmpix_xrdma_f08
# (The MPI's own wrapper: mpifort, or mpifort.mpich for an MPICH build.)
mpifort=$(awk '/^MPIFORT = / {print $3}' "$build/Makefile")
check "${mpifort:-mpifort} -I'$root/include' '$src/examples/mpi_f08_xops.f90' -L'$root/lib' -lmpix_xrdma_f08 -o xops \
       \$(awk '/^LDFLAGS = / {sub(/^LDFLAGS = /, \"\"); print}' '$build/Makefile')" \
      "mpifort app.f90 -lmpix_xrdma_f08"
cp "$build/examples/mpi_f08_ifunc.xfn" . 2>/dev/null
read -ra flags <"$src/scripts/mpirun-flags"
preload=""
rt=$(ldd ./xops 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
[ -n "$rt" ] && preload="-x LD_PRELOAD=$rt"
check "timeout -k 5 120 '$src/scripts/mpi-launch' ${flags[*]} $preload -x LD_LIBRARY_PATH -x UCX_TLS=sm,self -n 2 ./xops >run.log 2>&1 &&
       grep -q 'answers checked: .* ok' run.log || { cat run.log; false; }" "the installed module's program runs and checks"
exit $fail
