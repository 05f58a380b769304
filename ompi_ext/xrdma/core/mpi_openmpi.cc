// Open MPI 4.1 behind mpi_impl.h: its progress engine runs ours (the hook
// is progress_hook.cc: opal's headers clash with hwloc's), its blocking
// calls need no help, osc ucx places MPI_Win_allocate memory in a System V
// segment node peers attach by id, and XRDMA_FLUSH_SKIP wraps its one-sided
// component's table (osc_flush.cc, osc_table.c).
#include "mpi_impl.h"

#include "xrdma_config.h"

#include <sys/ipc.h>
#include <sys/shm.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace xrdma::mpi {

// progress_hook.cc
void progress_hook_register();
void progress_hook_unregister();

const char *mpi_impl_name()
{
#define XRDMA_STR2(x) #x
#define XRDMA_STR(x) XRDMA_STR2(x)
    return "Open MPI " XRDMA_STR(OMPI_MAJOR_VERSION) "." XRDMA_STR(OMPI_MINOR_VERSION) "." XRDMA_STR(
        OMPI_RELEASE_VERSION);
#undef XRDMA_STR
#undef XRDMA_STR2
}

void mpi_progress_start() { progress_hook_register(); }
void mpi_progress_stop() { progress_hook_unregister(); }
void mpi_progress_idle() {}

// Open MPI's waits inside these calls run the hook.
int mpi_meet(MPI_Comm) { return MPI_SUCCESS; }
int mpi_window_meet(MPI_Win) { return MPI_SUCCESS; }
void mpi_window_created(MPI_Win, MPI_Comm) {}
void mpi_window_freed(MPI_Win) {}

// Whether [base, base+bytes) of this process lies in memory other processes
// can map, read from /proc/self/maps: a System V segment (osc ucx places
// MPI_Win_allocate memory in one: the mapping is "/SYSV<key> (deleted)",
// shared, its inode is the shmid) or another shared mapping (osc sm's file;
// @p segment -1: peers ask MPI_Win_shared_query).
bool mpi_window_memory_offer(MPI_Win, const void *base, uint64_t bytes, int *segment, uint64_t *offset,
                             std::string *why)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(base);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        uintptr_t lo, hi;
        char perms[8] = {0};
        unsigned long long off, inode;
        char dev[32];
        int pos = 0;
        if (sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s %llx %31s %llu %n", &lo, &hi, perms, &off, dev,
                   &inode, &pos) < 6)
            continue;
        if (a < lo || a >= hi) continue;
        std::string path = line.substr(size_t(pos));
        if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 's') {
            *why = "window memory is not shared with other processes (" + std::string(perms) + " " +
                   (path.empty() ? "anonymous" : path) + ")";
            return false;
        }
        if (path.rfind("/SYSV", 0) != 0) {  // shared otherwise (osc sm): MPI_Win_shared_query maps it
            *segment = -1;
            return true;
        }
        if (a + bytes > hi) {
            *why = "the window extends past its segment's mapping";
            return false;
        }
        struct shmid_ds ds {};
        if (shmctl(int(inode), IPC_STAT, &ds) != 0) {
            *why = "shmctl(" + std::to_string(inode) + "): " + strerror(errno);
            return false;
        }
        *segment = int(inode);
        *offset = a - lo + off;
        if (*offset + bytes > ds.shm_segsz) {
            *why = "the segment is smaller than the window";
            return false;
        }
        return true;
    }
    *why = "window base not found in /proc/self/maps";
    return false;
}

char *mpi_window_memory_map(int segment, uint64_t offset, uint64_t bytes, void **attached, std::string *why)
{
    void *a = shmat(segment, nullptr, 0);
    struct shmid_ds ds {};
    if (a == reinterpret_cast<void *>(-1) || shmctl(segment, IPC_STAT, &ds) != 0 || offset + bytes > ds.shm_segsz) {
        *why = "System V segment " + std::to_string(segment) + ": " +
               (a == reinterpret_cast<void *>(-1) ? strerror(errno) : "segment too small");
        if (a != reinterpret_cast<void *>(-1)) shmdt(a);
        return nullptr;
    }
    *attached = a;
    return static_cast<char *>(a) + offset;
}

void mpi_window_memory_release(void *attached)
{
    if (attached) shmdt(attached);
}

int mpi_error_code(int cls, const std::string &text)
{
    int code;
    if (MPI_Add_error_code(cls, &code) != MPI_SUCCESS) return cls;
    MPI_Add_error_string(code, const_cast<char *>(text.c_str()));
    return code;
}

int mpi_grequest_query_result(MPI_Request, int err) { return err; }

bool mpi_flush_skip_available() { return XRDMA_HAVE_OSC_TABLE; }

}  // namespace xrdma::mpi
