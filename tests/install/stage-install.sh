# Sourced by the install tests: `make install DESTDIR=$stage` of the build
# tree (removed at exit), $root = the staged prefix, check CMD WHAT, which
# prints ok/FAIL and sets fail=1 on failure, and core_before_libmpi EXE.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail=0
check() { if eval "$1"; then echo "ok - $2"; else echo "FAIL - $2"; fail=1; fi; }

# make check installs the tree once before the tests run (tests/install/
# local.mk: libtool relinks the libraries inside .libs while it installs,
# which a test loading them at that moment would meet); each install test
# works in a copy of it. Run alone, after a rebuild, a test installs for
# itself, one install at a time (two at once leave .libs without them).
pre=$build/tests/install/staged
if [ -d "$pre" ] && [ "$build/tests/install/staged.stamp" -nt "$build/.libs/libmpix_xrdma_core.so" ]; then
    cp -a "$pre/." "$stage/" || exit 1
else
    flock "$build/.stage-install.lock" make -C "$build" install DESTDIR="$stage" >"$stage/install.log" 2>&1 ||
        { tail -20 "$stage/install.log"; exit 1; }
fi
prefix=$(sed -n 's/^prefix = //p' "$build/Makefile")
root=$stage$prefix
# core_before_libmpi EXE: EXE's needed list names libmpix_xrdma_core.so.0,
# ahead of libmpi.so.* if that is there too: the dynamic loader searches them
# in this order, so XRDMA's MPI_Init and MPI_Win_* are the ones called.
core_before_libmpi()
{
    readelf -d "$1" | awk '/NEEDED/ { if ($0 ~ /libmpix_xrdma_core\.so/ && !c) c = NR; if ($0 ~ /libmpi(ch)?\.so/ && !m) m = NR }
                           END { exit !(c && (!m || c < m)) }'
}
