// Bundles of X-operations (origin side, ops.cc): a stream of small
// MPIX_Xinvoke calls to one target, with one function whose invocations end
// where they run (ucx_ifunc_stays(): its image never forwards), goes as
// one invocation of up to XRDMA_BUNDLE of them. The target runs them in
// order (window_dispatch(), op_target.cc); one acknowledgement answers all. A bundle waits here until
// it is full, or an X-op of another kind, window, target or function comes,
// or any progress pass or synchronisation call: never past the next.
#pragma once

namespace xrdma::mpi {

// X-ops waiting in the bundle (under Runtime::mu).
extern unsigned g_bundled;
// The window of the Xinvoke that went alone last since the last
// synchronisation call (ops.cc: the next with the same window, target and
// function starts a bundle).
extern const void *g_bundle_alone;
// Send the bundle now (under Runtime::mu). A send that fails records the
// error for the synchronisation call that completes its X-ops.
void bundle_flush();
inline void bundle_flush_if_any()
{
    if (__builtin_expect(g_bundled != 0, 0)) bundle_flush();
}
// A synchronisation call: the bundle goes, and the next Xinvoke goes alone
// (a bundle starts with the second of a stream).
inline void bundle_synced()
{
    bundle_flush_if_any();
    g_bundle_alone = nullptr;
}

}  // namespace xrdma::mpi
