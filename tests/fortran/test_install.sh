#!/bin/bash
# The Fortran module installed (make install DESTDIR=...): mpix_xrdma.mod in
# include/, libmpix_xrdma_f08.so the linker script, the man page; programs
# build against the staged tree as the docs say (mpifort -lmpix_xrdma_f08,
# pkg-config mpix-xrdma-f08, CMake's XRDMA::mpix_xrdma_f08) and run. One of
# them calls MPI functions of its own (own_mpi_calls.f90): with the linker's
# --as-needed (Debian's default) XRDMA's core must still come before libmpi.
. "${XRDMA_TEST_SRCDIR:?}/tests/install/stage-install.sh"
check "[ -f '$root/include/mpix_xrdma.mod' ]" "installed include/mpix_xrdma.mod"
check "head -c 20 '$root/lib/libmpix_xrdma_f08.so' | grep -q 'GNU ld script'" "libmpix_xrdma_f08.so is a linker script"
check "MANWIDTH=80 man -l '$root/share/man/man3/mpix_xrdma_f08.3' 2>/dev/null | grep -q mpi_f08" \
      "man page mpix_xrdma_f08(3) renders"
export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd "$stage" || exit 1
# A sanitizer build's libraries need its flags in the program's link too.
ldflags=$(awk '/^LDFLAGS = / {sub(/^LDFLAGS = /, ""); print}' "$build/Makefile")
# What the README says: mpifort -I$prefix/include app.f90 -L$prefix/lib -lmpix_xrdma_f08
# (The MPI's own wrapper: mpifort, or mpifort.mpich for an MPICH build.)
mpifort=$(awk '/^MPIFORT = / {print $3}' "$build/Makefile")
mpifort=${mpifort:-mpifort}
check "$mpifort -I'$root/include' '$src/examples/mpi_f08_xops.f90' -L'$root/lib' -lmpix_xrdma_f08 -o xops $ldflags" \
      "mpifort app.f90 -lmpix_xrdma_f08"
check "$mpifort -I'$root/include' '$src/tests/fortran/own_mpi_calls.f90' -L'$root/lib' -lmpix_xrdma_f08 -o own1 $ldflags" \
      "mpifort own_mpi_calls.f90 -lmpix_xrdma_f08 (MPI calls of its own)"
# The same with --as-needed asked for explicitly (not every distribution's
# default), and through pkg-config.
check "$mpifort -I'$root/include' '$src/tests/fortran/own_mpi_calls.f90' -Wl,--as-needed -L'$root/lib' -lmpix_xrdma_f08 \
       -o own2 $ldflags" "mpifort own_mpi_calls.f90 -Wl,--as-needed -lmpix_xrdma_f08"
pc() { PKG_CONFIG_PATH="$root/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config "$@"; }
check "$mpifort '$src/tests/fortran/own_mpi_calls.f90' $(pc --cflags --libs mpix-xrdma-f08) -o own3 $ldflags" \
      "mpifort own_mpi_calls.f90 \$(pkg-config --cflags --libs mpix-xrdma-f08)"
if command -v cmake >/dev/null; then
    check "cmake -S '$src/tests/fortran/cmake' -B cmake-build -DCMAKE_PREFIX_PATH='$root' -DCMAKE_Fortran_COMPILER=$mpifort \
           -DCMAKE_EXE_LINKER_FLAGS='$ldflags' >cmake.log 2>&1 && cmake --build cmake-build >>cmake.log 2>&1 &&
           cp cmake-build/own_mpi_calls own4 || { tail -20 cmake.log; false; }" \
          "find_package(XRDMA) and XRDMA::mpix_xrdma_f08 build a Fortran project"
else
    echo "skip - cmake not installed: XRDMA::mpix_xrdma_f08 not tested"
fi
# Each program's needed list names XRDMA's core, and before libmpi: the
# loader searches the needed libraries in this order.
for exe in xops own1 own2 own3 own4; do
    [ -x "$exe" ] || continue
    check "core_before_libmpi $exe" "$exe needs libmpix_xrdma_core, before libmpi"
    check "readelf -d $exe | grep -q 'NEEDED.*libmpix_xrdma_f08.so.0'" "$exe needs libmpix_xrdma_f08"
done
cp "$build/examples/mpi_f08_ifunc.xfn" . 2>/dev/null
read -ra flags <"$src/scripts/mpirun-flags"
preload=""
rt=$(ldd ./xops 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
[ -n "$rt" ] && preload="-x LD_PRELOAD=$rt"
check "timeout -k 5 120 '$src/scripts/mpi-launch' ${flags[*]} $preload -x LD_LIBRARY_PATH -x UCX_TLS=sm,self -n 2 ./xops >run.log 2>&1 &&
       grep -q 'answers checked: .* ok' run.log || { cat run.log; false; }" "the installed module's program runs and checks"
for exe in own1 own3 own4; do
    [ -x "$exe" ] || continue
    check "timeout -k 5 120 '$src/scripts/mpi-launch' ${flags[*]} $preload -x LD_LIBRARY_PATH -x UCX_TLS=sm,self -n 2 ./$exe \
           mpi_f08_ifunc.xfn >$exe.log 2>&1 || { cat $exe.log; false; }" "$exe runs its X-operations and checks them"
done
exit $fail
