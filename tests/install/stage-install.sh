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

# One install at a time: libtool relinks the libraries inside the build
# tree's .libs (moving each aside, then back), and two at once (the install
# tests of C, Fortran and Python under make -j) leave it without them.
flock "$build/.stage-install.lock" make -C "$build" install DESTDIR="$stage" >"$stage/install.log" 2>&1 ||
    { tail -20 "$stage/install.log"; exit 1; }
prefix=$(sed -n 's/^prefix = //p' "$build/Makefile")
root=$stage$prefix
# core_before_libmpi EXE: EXE's needed list names libmpix_xrdma_core.so.0,
# ahead of libmpi.so.* if that is there too: the dynamic loader searches them
# in this order, so XRDMA's MPI_Init and MPI_Win_* are the ones called.
core_before_libmpi()
{
    readelf -d "$1" | awk '/NEEDED/ { if ($0 ~ /libmpix_xrdma_core\.so/ && !c) c = NR; if ($0 ~ /libmpi\.so/ && !m) m = NR }
                           END { exit !(c && (!m || c < m)) }'
}
