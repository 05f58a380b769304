#!/bin/bash
# Heterogeneous demonstration as a test: an aarch64 build of the plugin's
# test peer, run under qemu-aarch64-static, receives images built here on
# x86-64 over UCX TCP (loopback), JIT-compiles their aarch64 bitcode and
# replies (tests/hetero/test_hetero.cc). Skipped (77) only where qemu or the
# arm64 packages cannot be installed (setup-aarch64-sysroot.sh says why).
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
case $(uname -m) in
    x86_64) ;;
    *) echo "SKIP: this demonstration runs an aarch64 peer on an x86-64 host (this is $(uname -m))"; exit 77 ;;
esac
cache=${XRDMA_AARCH64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xrdma/aarch64}
t0=$(date +%s)
"$src/tests/hetero/setup-aarch64-sysroot.sh" "$cache"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: setup-aarch64-sysroot.sh exited with $rc"; exit 1; }
sysroot=$cache/sysroot
t1=$(date +%s)
peer=$("$src/tests/hetero/build-aarch64-peer.sh" "$sysroot" "$build/tests/hetero/aarch64") ||
    { echo "FAIL: cross-compiling the aarch64 peer failed"; exit 1; }
t2=$(date +%s)
echo "setup $((t1 - t0)) s, aarch64 peer build $((t2 - t1)) s: $peer"
# UCX finds its transport modules in the sysroot through qemu's -L.
export XRDMA_TEST_PEER="qemu-aarch64-static -L $sysroot $peer"
# No aarch64 build of the compile helper: the peer compiles in its process.
export XRDMA_JIT_HELPER=none
exec timeout -k 10 600 "$build/tests/hetero/test_hetero"
