#!/bin/bash
# Cross-compile the plugin's test peer (tests/plugin/peer_main.cc with the
# whole libucx_ifunc, JIT module linked in: jit_module.cc finds it in the
# program) for aarch64 against the arm64 UCX and
# LLVM of SYSROOT (made by setup-aarch64-sysroot.sh).
#
#   build-aarch64-peer.sh SYSROOT OUTDIR
#
# Incremental (make with dependency files): a second run only relinks what
# changed. Prints the peer's path.
set -euo pipefail
sysroot=${1:?SYSROOT}
out=${2:?OUTDIR}
src=${XRDMA_TEST_SRCDIR:?}
build=${XRDMA_TEST_BUILDDIR:?}
cxx=${XRDMA_AARCH64_CXX:-aarch64-linux-gnu-g++}
mkdir -p "$out/obj"
# The library's sources, as ucx_plugin/local.mk lists them (loader_jit.cc too),
# and the common utilities it links (common/local.mk).
# (Not the compile helper's main: the peer compiles in process, XRDMA_JIT_HELPER=none.)
plugin=$(grep -o 'ucx_plugin/[A-Za-z0-9_/]*\.cc' "$src/ucx_plugin/local.mk" | grep -v jit_helper_main | sort -u)
common=$(grep -o 'common/[A-Za-z0-9_]*\.cc' "$src/common/local.mk" | sort -u)
sources="$common $plugin tests/plugin/peer_main.cc tests/plugin/ucx_env.cc"
# An object per source, named after its path (common/ and ucx_plugin/ both have a knobs.cc).
obj() { printf 'obj/%s.o' "$(printf '%s' "${1%.cc}" | tr / _)"; }
libdirs="$sysroot/usr/lib/aarch64-linux-gnu $sysroot/lib/aarch64-linux-gnu"
cat >"$out/Makefile" <<MK
CXX = $cxx
CPPFLAGS = -I$build -I$src/ucx_plugin/include -I$src/common/include -I$src/ucx_plugin -I$src/tests/plugin \\
  -isystem $sysroot/usr/include -isystem $sysroot/usr/include/aarch64-linux-gnu \\
  -isystem $sysroot/usr/lib/llvm-14/include \\
  -DXRDMA_INCLUDEDIR='"/usr/include"' -DXRDMA_PKGLIBDIR='"/usr/lib/xrdma"'
CXXFLAGS = -std=c++17 -O1 -g0 -MMD -MP
OBJS = $(for s in $sources; do printf '%s ' "$(obj "$s")"; done)
xrdma_test_peer: \$(OBJS)
	\$(CXX) -o \$@ \$(OBJS) $(for d in $libdirs; do printf -- '-L%s -Wl,-rpath-link,%s ' "$d" "$d"; done) \\
	  -lucp -lucs -lLLVM-14 -lcrypto -ldl -lpthread -lrt
$(obj ucx_plugin/load/loader_jit.cc): CXXFLAGS += -fno-rtti
$(for s in $sources; do printf '%s: %s\n\t$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<\n' "$(obj "$s")" "$src/$s"; done)
-include obj/*.d
MK
make -s -C "$out" -j"$(nproc)" xrdma_test_peer >&2
echo "$out/xrdma_test_peer"
