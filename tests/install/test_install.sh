#!/bin/bash
# `make install DESTDIR=...` puts headers, libraries, tools, man pages and the
# pkg-config files in place, and an MPI program builds against the installed
# tree with `mpicc -lmpix_xrdma`, `mpicxx -lmpix_xrdma`, pkg-config and CMake,
# and runs. The program calls MPI functions of its own (hello_xrdma.c): with
# the linker's --as-needed (Debian's default) XRDMA's core must still come
# before libmpi in its needed list.
. "${XRDMA_TEST_SRCDIR:?}/tests/install/stage-install.sh"
for f in include/ucx_ifunc.h include/xrdma_ifunc.h include/ucx_ifunc/ucp_compat.h include/ucx_ifunc/runtime.h include/mpix_xrdma.h \
         include/mpiext_xrdma_c.h bin/xrdma-cc bin/xrdma_info lib/libucx_ifunc.so lib/libmpix_xrdma.so \
         lib/xrdma/libxrdma_jit.so lib/xrdma/xrdma-jit-helper lib/pkgconfig/ucx-ifunc.pc lib/pkgconfig/mpix-xrdma.pc; do
    check "[ -e '$root/$f' ]" "installed $f"
done
# LLVM is the JIT module's alone, loaded when bitcode first arrives.
check "! objdump -p '$root/lib/libucx_ifunc.so' | grep -q 'NEEDED.*LLVM'" "libucx_ifunc.so does not link libLLVM"
check "objdump -p '$root/lib/xrdma/libxrdma_jit.so' | grep -q 'NEEDED.*LLVM'" "the JIT module links libLLVM"
# Only public headers: the core's internal interface stays in the source tree.
check "[ ! -e '$root/include/xrdma_mpi.h' ]" "internal xrdma_mpi.h is not installed"
for m in man1/xrdma-cc.1 man1/xrdma_info.1 man3/ucx_ifunc.3 man5/xrdma-image.5 man7/xrdma.7; do
    check "[ -f '$root/share/man/$m' ] && MANWIDTH=80 man -l '$root/share/man/$m' 2>/dev/null | grep -q ." "man page $m renders"
done
for m in "$root"/share/man/man3/MPIX_*.3; do
    [ -e "$m" ] || continue
    check "MANPATH='$root/share/man' man -w $(basename "$m" .3) >/dev/null 2>&1" "man $(basename "$m" .3) is found"
done

export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$root/bin:$PATH
export XRDMA_CC_INCLUDE_DIR=$root/include
cd "$stage" || exit 1
# xrdma-cc reads its bitcode through the installed module, found beside the
# installed library although the configured prefix is elsewhere.
check "xrdma-cc '$src/tests/install/sum_ifunc.c' -o sum.xfn" "installed xrdma-cc builds an image"
check "mpicc '$src/tests/install/hello_xrdma.c' -I'$root/include' -L'$root/lib' -lmpix_xrdma -o hello1" \
      "mpicc app.c -lmpix_xrdma"
check "mpicxx -x c++ '$src/tests/install/hello_xrdma.c' -x none -I'$root/include' -Wl,--as-needed -L'$root/lib' \
       -lmpix_xrdma -o hello5" "mpicxx app.cc -Wl,--as-needed -lmpix_xrdma"
check "PKG_CONFIG_PATH='$root/lib/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$stage' \
       mpicc '$src/tests/install/hello_xrdma.c' \$(PKG_CONFIG_PATH='$root/lib/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$stage' pkg-config --cflags --libs mpix-xrdma) -o hello2" \
      "mpicc app.c \$(pkg-config --cflags --libs mpix-xrdma)"
# find_package(XRDMA): a tiny CMake project against the staged tree (the
# package finds its paths from its own place, so no sysroot is needed).
check "[ -f '$root/lib/cmake/XRDMA/XRDMAConfig.cmake' ]" "installed lib/cmake/XRDMA/XRDMAConfig.cmake"
check "[ -f '$root/lib/xrdma/link_core.o' ] && grep -q 'INPUT(xrdma/link_core.o libmpix_xrdma_core' '$root/lib/libmpix_xrdma.so'" \
      "libmpix_xrdma.so names xrdma/link_core.o (installed) before the core"
cmake_ok=0
if command -v cmake >/dev/null; then
    check "cmake -S '$src/tests/install/cmake' -B cmake-build -DCMAKE_PREFIX_PATH='$root' -DCMAKE_C_COMPILER=mpicc \
           >cmake.log 2>&1 && cmake --build cmake-build >>cmake.log 2>&1 || { tail -20 cmake.log; false; }" \
          "find_package(XRDMA), XRDMA::mpix_xrdma and xrdma_add_image() build a project" && cmake_ok=1
    check "cmake -S '$src/tests/install/cmake-cxx' -B cmake-cxx -DCMAKE_PREFIX_PATH='$root' -DCMAKE_CXX_COMPILER=mpicxx \
           >cmake-cxx.log 2>&1 && cmake --build cmake-cxx >>cmake-cxx.log 2>&1 && cp cmake-cxx/hello_cxx hello6 ||
           { tail -20 cmake-cxx.log; false; }" "find_package(XRDMA) and XRDMA::mpix_xrdma build a C++ project"
else
    echo "skip - cmake not installed: find_package(XRDMA) not tested"
fi
read -ra flags <"$src/scripts/mpirun-flags"
# A sanitizer build's library needs the ASan/TSan runtime loaded first, which
# a program built without -fsanitize does not do: preload it for the ranks.
[ $cmake_ok = 1 ] && cp cmake-build/hello hello3 && cp cmake-build/embedded hello4 && cp cmake-build/sum.xfn cmake-sum.xfn
for exe in hello1 hello2 hello3 hello4 hello5 hello6; do
    [ -x "$exe" ] || continue
    check "core_before_libmpi $exe" "$exe needs libmpix_xrdma_core, before libmpi"
    preload=""
    rt=$(ldd "./$exe" 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
    [ -n "$rt" ] && preload="-x LD_PRELOAD=$rt"
    img=sum.xfn
    [ "$exe" = hello3 ] && img=cmake-sum.xfn  # built by xrdma_add_image()
    check "timeout -k 5 120 mpirun ${flags[*]} $preload -x LD_LIBRARY_PATH -n 2 ./$exe $img" "$exe runs and its answer checks"
done
# LD_PRELOAD (xrdma(7)): the installed core interposes a plain MPI binary's
# window calls; the linker script libmpix_xrdma.so cannot be preloaded.
if mpicc "$src/tests/compare-rma/programs/get_lock.c" -o plain_rma 2>/dev/null; then
    # (To a file: mpirun dies when a reader closes its output early.) A
    # sanitizer build's core needs the sanitizer's runtime loaded first.
    rt=$(ldd ./hello1 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
    check "timeout -k 5 60 mpirun ${flags[*]} -x LD_LIBRARY_PATH -x LD_DEBUG=bindings \
           -x LD_PRELOAD='${rt:+$rt:}$root/lib/libmpix_xrdma_core.so.0' -n 2 ./plain_rma >preload.log 2>&1 &&
           grep -q \"libmpix_xrdma_core.so.0 .*normal symbol .MPI_Win_allocate'\" preload.log" \
          "LD_PRELOAD=libmpix_xrdma_core.so.0 interposes a plain program's MPI_Win_allocate"
    check "head -c 20 '$root/lib/libmpix_xrdma.so' | grep -q 'GNU ld script'" "libmpix_xrdma.so is the linker script xrdma(7) says"
fi
exit $fail
