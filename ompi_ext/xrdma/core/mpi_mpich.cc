// MPICH 4 behind mpi_impl.h.
//
// Progress: MPICH has no progress hook a library can reach (its hooks are
// internal), and calls a generalized request's poll function only while
// that very request is tested or waited for: a poll function counted no
// call during a second in MPI_Barrier or MPI_Recv (MPICH 4.0.2). So XRDMA
// serves from its own PMPI wrappers of the calls that wait (pmpi_mpich.cc)
// and, where MPI must wait inside a call XRDMA cannot turn into tests
// (window creation, MPI_Win_fence, MPI_Win_free), lets the processes meet
// first in a nonblocking barrier it waits for by testing. XRDMA's own waits
// give MPICH's progress a turn now and then (mpi_progress_idle()): MPICH's
// passive-target locks need the target's progress.
//
// Node-local execution: MPICH 4.0's MPI_Win_shared_query refuses
// MPI_Win_allocate windows, but MPICH places their memory in a file in
// /dev/shm that every process of the window on the node maps whole. A
// target offers the file (its inode) and its window's offset in it; an
// origin finds the same file among its own mappings: nothing to attach.
//
// Errors: a code MPI_Add_error_code adds to a predefined class keeps no
// string in MPICH 4.0 (MPI_Error_string gives an unrelated message of its
// own table): such a code is made the way MPICH makes its own, whose string
// is MPICH's error stack ("Invalid rank, error stack:\nXRDMA(0): text");
// XRDMA's MPI_Error_string gives its text alone, as under Open MPI.
//
// XRDMA_FLUSH_SKIP: Open MPI's one-sided component table has no MPICH
// counterpart; every MPI_Win_flush goes to MPICH (osc_flush_wrap() wraps
// nothing).
#include "mpi_impl.h"

#include "mpi_mpich.h"
#include "osc_flush.h"

#include "xrdma_common/log.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <unordered_map>

// MPICH's own constructor of error codes (exported by libmpich; its
// internal header mpir_err.h declares it so).
extern "C" int MPIR_Err_create_code(int lastcode, int fatal, const char fcname[], int line, int error_class,
                                    const char generic_msg[], const char specific_msg[], ...);

namespace xrdma::mpi {

namespace {

// A generalized request that never completes before stop: testing it runs
// one pass of MPICH's progress engine (MPI_Test does before it looks).
MPI_Request g_poke = MPI_REQUEST_NULL;
unsigned g_idle = 0;

int poke_query(void *, MPI_Status *st)
{
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
int poke_free(void *) { return MPI_SUCCESS; }
int poke_cancel(void *, int) { return MPI_SUCCESS; }

// Each window's processes, for the meetings of MPI_Win_fence and
// MPI_Win_free: a duplicate of the communicator it was created over, one per
// communicator (cached on it), shared by its windows. MPICH has 2048
// communicators a process, and each window holds one of MPICH's own already.
struct Meet {
    MPI_Comm dup;
    int refs;  // its windows, and 1 while the communicator is alive
};
int g_meet_key = MPI_KEYVAL_INVALID;
std::unordered_map<MPI_Win, Meet *> g_meets;

void meet_unref(Meet *m)
{
    if (--m->refs > 0) return;
    PMPI_Comm_free(&m->dup);
    delete m;
}
int meet_delete(MPI_Comm, int, void *value, void *)
{
    meet_unref(static_cast<Meet *>(value));
    return MPI_SUCCESS;
}

// One line of /proc/self/maps.
struct Mapping {
    uintptr_t lo, hi;
    char perms[8];
    unsigned long long off, inode;
    std::string path;
};
template <typename Fn>
bool each_mapping(Fn &&fn)
{
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        Mapping m{};
        char dev[32];
        int pos = 0;
        if (sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s %llx %31s %llu %n", &m.lo, &m.hi, m.perms, &m.off,
                   dev, &m.inode, &pos) < 6)
            continue;
        m.path = line.substr(size_t(pos));
        if (fn(m)) return true;
    }
    return false;
}
// A file in /dev/shm mapped shared and writable: where MPICH puts node-shared memory.
bool node_shared(const Mapping &m)
{
    return m.perms[0] == 'r' && m.perms[1] == 'w' && m.perms[3] == 's' && m.path.rfind("/dev/shm/", 0) == 0 &&
           m.inode > 0 && m.inode <= INT_MAX;
}

}  // namespace

const char *mpi_impl_name() { return "MPICH " MPICH_VERSION; }

void mpi_progress_start()
{
    if (g_poke == MPI_REQUEST_NULL &&
        PMPI_Grequest_start(poke_query, poke_free, poke_cancel, nullptr, &g_poke) != MPI_SUCCESS)
        g_poke = MPI_REQUEST_NULL;
}

void mpi_progress_stop()
{
    if (g_poke == MPI_REQUEST_NULL) return;
    PMPI_Grequest_complete(g_poke);
    PMPI_Wait(&g_poke, MPI_STATUS_IGNORE);
}

void mpi_progress_idle()
{
    // (Every 64th idle pass: a pass of MPICH's engine costs about what ours does.)
    if ((++g_idle & 63) != 0 || g_poke == MPI_REQUEST_NULL) return;
    int flag = 0;
    PMPI_Test(&g_poke, &flag, MPI_STATUS_IGNORE);
}

bool progress_yield_when_idle(bool) { return false; }

int mpi_meet(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) return MPI_SUCCESS;  // (the call reports it)
    MPI_Request r;
    const int rc = PMPI_Ibarrier(comm, &r);
    return rc != MPI_SUCCESS ? rc : serve_wait(&r, MPI_STATUS_IGNORE);
}

int mpi_window_meet(MPI_Win win)
{
    auto it = g_meets.find(win);
    return it == g_meets.end() ? MPI_SUCCESS : mpi_meet(it->second->dup);
}

void mpi_window_created(MPI_Win win, MPI_Comm comm)
{
    // (Every process of @p comm is in the creation call, mpi_meet() before
    // it, and has the same windows over @p comm: the same duplicate or none.)
    Meet *m = nullptr;
    int found = 0;
    if (g_meet_key == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, meet_delete, &g_meet_key, nullptr);
    if (g_meet_key != MPI_KEYVAL_INVALID) PMPI_Comm_get_attr(comm, g_meet_key, &m, &found);
    if (!found) {
        MPI_Comm dup;
        if (g_meet_key == MPI_KEYVAL_INVALID || PMPI_Comm_dup(comm, &dup) != MPI_SUCCESS) {
            XRDMA_WARN("no duplicate of the communicator of window %#llx: its fence and free do not serve X-ops",
                       mpi_handle(win));
            return;
        }
        m = new Meet{dup, 1};
        PMPI_Comm_set_attr(comm, g_meet_key, m);
    }
    ++m->refs;
    g_meets[win] = m;
}

void mpi_window_freed(MPI_Win win)
{
    auto it = g_meets.find(win);
    if (it == g_meets.end()) return;
    meet_unref(it->second);
    g_meets.erase(it);
}

bool mpi_window_memory_offer(MPI_Win, const void *base, uint64_t bytes, int *segment, uint64_t *offset,
                             std::string *why)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(base);
    bool found = each_mapping([&](const Mapping &m) {
        if (a < m.lo || a >= m.hi) return false;
        if (!node_shared(m)) {
            *why = "window memory is not node-shared memory of MPICH (" + std::string(m.perms) + " " +
                   (m.path.empty() ? "anonymous" : m.path) + ")";
        } else if (a + bytes > m.hi) {
            *why = "the window extends past its mapping";
        } else {
            *segment = int(m.inode);
            *offset = a - m.lo + m.off;
            why->clear();
        }
        return true;
    });
    if (!found) *why = "window base not found in /proc/self/maps";
    return found && why->empty();
}

char *mpi_window_memory_map(int segment, uint64_t offset, uint64_t bytes, void **attached, std::string *why)
{
    char *base = nullptr;
    each_mapping([&](const Mapping &m) {
        if (!node_shared(m) || m.inode != (unsigned long long)segment || offset < m.off ||
            offset + bytes > m.off + (m.hi - m.lo))
            return false;
        base = reinterpret_cast<char *>(m.lo + (offset - m.off));
        return true;
    });
    *attached = nullptr;  // (MPICH's mapping: it goes with the window)
    if (!base) *why = "its node-shared file (inode " + std::to_string(segment) + ") is not mapped here";
    return base;
}

void mpi_window_memory_release(void *) {}

namespace {
// The texts of the codes made with MPIR_Err_create_code, for MPI_Error_string
// (errors.cc calls mpi_error_code() under its lock; MPI_Error_string may run
// on any thread).
std::mutex g_texts_lock;
std::unordered_map<int, std::string> g_texts;

// MPICH 4.0 numbers the codes MPI_Add_error_code adds, all classes together,
// in 11 bits of the code: past 2047 of them it gives a code that
// MPI_Add_error_string refuses and MPI_Error_string crashes on. XRDMA's
// messages stop short of that, leaving codes for the one per class that
// errors.cc adds past its table, and for the program's own.
constexpr int kMpichCodeIndexes = 2047, kCodesLeft = 64;
bool g_codes_full = false;
}  // namespace

int mpi_error_code(int cls, const std::string &text)
{
    int code;
    if (cls > MPI_ERR_LASTCODE) {  // a class XRDMA added: its codes keep their strings
        if (g_codes_full || MPI_Add_error_code(cls, &code) != MPI_SUCCESS) return cls;
        if (((code >> 8) & 0x7ff) == 0 || ((code >> 8) & 0x7ff) > kMpichCodeIndexes - kCodesLeft) {
            g_codes_full = true;  // (that code unused)
            return cls;
        }
        MPI_Add_error_string(code, const_cast<char *>(text.c_str()));
        return code;
    }
    code = MPIR_Err_create_code(MPI_SUCCESS, 0, "XRDMA", 0, cls, "**fail", "%s", text.c_str());
    std::lock_guard<std::mutex> guard(g_texts_lock);
    // MPICH's codes of one class repeat after some thousands: a repeated
    // one keeps its first text, and this one gets the class's code.
    if (code == cls || !g_texts.emplace(code, text).second) return cls;
    return code;
}

thread_local std::unordered_map<MPI_Request, int> t_request_errors;

int mpi_grequest_query_result(MPI_Request request, int err)
{
    if (err != MPI_SUCCESS) t_request_errors[request] = err;
    return MPI_SUCCESS;
}

bool mpi_flush_skip_available() { return false; }

// XRDMA_FLUSH_SKIP (osc_flush.h): nothing to wrap.
OscFlushPtr osc_flush_wrap(MPI_Win, int) { return nullptr; }
void OscFlushRelease::operator()(OscFlush *) const {}

}  // namespace xrdma::mpi

// The text XRDMA gave a code it made, alone: MPICH's own string of it is an
// error stack (above).
extern "C" int MPI_Error_string(int code, char *string, int *len)
{
    {
        std::lock_guard<std::mutex> guard(xrdma::mpi::g_texts_lock);
        auto it = xrdma::mpi::g_texts.find(code);
        if (it != xrdma::mpi::g_texts.end()) {
            const size_t n = std::min(it->second.size(), size_t(MPI_MAX_ERROR_STRING - 1));
            memcpy(string, it->second.data(), n);
            string[n] = '\0';
            *len = static_cast<int>(n);
            return MPI_SUCCESS;
        }
    }
    return PMPI_Error_string(code, string, len);
}

// (What tests read of the flush skip: never wrapped here.)
extern "C" int xrdma_mpi_osc_flush_counts(MPI_Win, unsigned long long out[2])
{
    out[0] = out[1] = 0;
    return 0;
}
