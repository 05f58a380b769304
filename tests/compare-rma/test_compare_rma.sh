#!/bin/bash
# scripts/compare-rma on small MPI RMA programs (programs/: fence, lock,
# PSCW, atomics, 300 windows alive, 1000 windows made and freed in turn):
# built plain and with XRDMA linked, they must exit and print alike. And on differs/, whose output depends on the link:
# the script must notice and exit 1.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
command -v mpicc >/dev/null || { echo "skip: no mpicc"; exit 77; }
fail=0
out=$("$src/scripts/compare-rma" --xrdma "$build" -r 1 "$src/tests/compare-rma/programs" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: compare-rma found differences (exit $rc)"; fail=1; }
for p in cas_counter get_lock many_windows pscw_accumulate put_fence window_churn; do
    grep -Eq "^$p +0 +0 +same +[0-9.]+x$" <<<"$out" || { echo "FAIL: no clean line for $p"; fail=1; }
done
out=$("$src/scripts/compare-rma" --xrdma "$build" -r 1 "$src/tests/compare-rma/differs" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 1 ] && grep -q "^linked .*DIFFERS" <<<"$out" && grep -q "XRDMA core present" <<<"$out" ||
    { echo "FAIL: compare-rma did not report the difference of differs/linked (exit $rc)"; fail=1; }
exit $fail
