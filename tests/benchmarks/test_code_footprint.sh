#!/bin/sh
# benchmarks/drivers/code-footprint counts the code lines and pages a hop runs
# through, from two callgrind profiles. Callgrind names a shared object's
# code by its offset in the object, so two objects' code at the same offsets
# is two lines, not one; instructions that ran as often in the short run as
# in the long one (start-up) are not the hop's.
. "${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}/tests/benchmarks/callgrind_lib.sh"
# profile FILE HOPS: libA and libB each run 2 instructions per hop at
# offsets 0x1000 and 0x1004 (one line); libA also runs a call (whose
# inclusive cost is its callee's, not its own) and start-up code at 0x9000
# once.
profile() {
    { callgrind_header; cat <<PROF
ob=(1) /lib/libA.so
fl=(1) ???
fn=(1) hop_a
0x1000 0 $2
+4 0 $2
calls=$2 0x2000 0
+4 0 1000000
fn=(2) startup
0x9000 0 1
ob=(2) /lib/libB.so
fl=(1)
fn=(3) hop_b
0x1000 0 $2
+4 0 $2
PROF
    } >"$1"
}
profile "$dir/short" 50
profile "$dir/long" 100
got=$(python3 "$src/benchmarks/drivers/code-footprint" "$dir/short" "$dir/long" 50)
# libA's line 0x1000 and libB's line 0x1000 (the call line at 0x1008 is
# the same line as 0x1000 and its cost is the callee's); pages likewise.
if [ "$got" != "2 2" ]; then
    echo "FAIL: code-footprint counted '$got' lines and pages, want '2 2'" >&2
    exit 1
fi
echo "PASS: code-footprint counts each object's lines and pages apart"
