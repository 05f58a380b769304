# Sourced by the install tests: `make install DESTDIR=$stage` of the build
# tree (removed at exit), $root = the staged prefix, and check CMD WHAT,
# which prints ok/FAIL and sets fail=1 on failure.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail=0
check() { if eval "$1"; then echo "ok - $2"; else echo "FAIL - $2"; fail=1; fi; }

make -C "$build" install DESTDIR="$stage" >"$stage/install.log" 2>&1 || { tail -20 "$stage/install.log"; exit 1; }
prefix=$(sed -n 's/^prefix = //p' "$build/Makefile")
root=$stage$prefix
