#!/bin/sh
# benchmarks/drivers/hop-batching reads how ring_take() ran in a callgrind profile:
# its calls, the turns of its loop (frames), and its instructions that ran
# once per call. A call made from it costs its callee's instructions, not
# its own; another function's instructions do not count.
. "${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}/tests/benchmarks/callgrind_lib.sh"
# profile FILE CALLS FRAMES: ring_take called CALLS times (from a caller,
# and from a second object's code), running 2 instructions once per call and
# 3 once per frame, one of them a call whose inclusive cost is 1000000; a
# third instruction on a rare path (once); another function with
# instructions that ran CALLS times.
profile() {
    { callgrind_header; cat <<PROF
ob=(1) /lib/libucx_ifunc.so
fl=(1) ???
fn=(1) xrdma::ring_poll_rings(ucp_worker*)
0x500 0 $2
cfn=(2) xrdma::(anonymous namespace)::ring_take(ucx_ifunc_context*, xrdma::RingIn&, unsigned long, bool)
calls=$(($2 - 1)) 0x1000 0
+4 0 5000
fn=(3) other
0x800 0 $2
+4 0 $2
fn=(2)
0x1000 0 $2
+4 0 $3
+4 0 $3
cfn=(4) target_handle_short
calls=$3 0x3000 0
+0 0 1000000
+4 0 $3
+4 0 1
+4 0 $2
ob=(2) /lib/libmpix.so
fl=(1)
fn=(5) caller_b
0x100 0 1
cfn=(2)
calls=1 0x1000 0
+0 0 50
PROF
    } >"$1"
}
check() {
    profile "$dir/p" "$1" "$2"
    got=$(python3 "$src/benchmarks/drivers/hop-batching" "$dir/p" ring_take)
    if [ "$got" != "$3" ]; then
        echo "FAIL: hop-batching read '$got' from $1 calls and $2 frames, want '$3'" >&2
        exit 1
    fi
}
check 40 100 "40 100 2"
check 100 100 "100 100 0"  # (a frame per call: nothing to tell apart)
echo "PASS: hop-batching reads calls, frames and per-call instructions"
