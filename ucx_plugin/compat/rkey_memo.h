// An origin's memo of ucp_rkey_ptr()'s answers, for a sender that writes
// the same few slots over and over (put-and-poll over shared memory).
// ucp_rkey_ptr() walks the rkey's memory domains and calls into the
// transport: some 50 instructions, a third of a send. An answer is reused
// only for the rkey handle and the address it was given for (no range is
// inferred), and only while no rkey of the process has been destroyed since:
// UCX tells nobody when an rkey goes (and a new one may then be unpacked at
// the same handle address, mapping the target's memory elsewhere), so this
// library interposes ucp_rkey_destroy() (rkey_memo.cc) to count destroys.
// Where the process's calls do not reach that interposer (a link order with
// libucp first, a dlopen() with RTLD_LOCAL), nothing is memoised: every
// lookup asks UCX.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>

namespace xrdma {

// ucp_rkey_destroy() calls so far (ours), plus 1: an entry of epoch 0 is
// empty.
extern std::atomic<uint64_t> g_rkey_epoch;

// Whether the process's ucp_rkey_destroy() is this library's (the memo's
// condition; checked once).
bool rkey_destroy_interposed();

// A few answers of ucp_rkey_ptr(), direct-mapped by address. One sender's:
// not shared between threads (a published-API ifunc's, whose sends are not
// thread-safe either).
class RkeyPtrMemo {
public:
    // ucp_rkey_ptr(@p rkey, @p raddr): the address mapped here, or nullptr
    // where UCX maps none (a put is needed).
    void *find(ucp_rkey_h rkey, uint64_t raddr)
    {
        const Entry &e = entries_[slot(raddr)];
        // (A destroy that happens before this send, by the program's own
        // ordering, is seen here even by a relaxed load: coherence.)
        if (e.raddr == raddr && e.rkey == rkey && e.epoch == g_rkey_epoch.load(std::memory_order_relaxed))
            return e.ptr;
        return ask(rkey, raddr);
    }

private:
    struct Entry {
        ucp_rkey_h rkey = nullptr;
        uint64_t raddr = 0;
        uint64_t epoch = 0;
        void *ptr = nullptr;
    };
    static constexpr unsigned kBits = 6;  // 64 slots: a ring of 32, with room
    static unsigned slot(uint64_t raddr) { return unsigned((raddr * 0x9E3779B97F4A7C15ull) >> (64 - kBits)); }
    void *ask(ucp_rkey_h rkey, uint64_t raddr);

    Entry entries_[1u << kBits];
};

}  // namespace xrdma
