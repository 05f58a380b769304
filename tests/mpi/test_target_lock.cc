// The per-target lock of node-local execution (ompi_ext/xrdma/core/
// target_lock.h) between processes, as node peers use it: in shared memory.
#include "target_lock.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

using xrdma::mpi::HeldLock;
using xrdma::mpi::lock;
using xrdma::mpi::lock_owner_id;
using xrdma::mpi::NodeLock;
using xrdma::mpi::unlock;

namespace {

struct Shared {
    NodeLock locks[2];
    volatile int64_t counter[2];
    std::atomic<int> ready;  // start gate: all children run at once
};

Shared *map_shared()
{
    void *p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return new (p) Shared{};
}

// Runs @p body in a child process; its exit status (-1 if it did not exit).
template <class Body>
int in_child(Body body)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);  // a hang guard only: a hung child is a failure, not a wait
        _exit(body());
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

}  // namespace

TEST(TargetLock, RecordsTheOwningProcess)
{
    Shared *s = map_shared();
    ASSERT_NE(s, nullptr);
    lock(&s->locks[0]);
    EXPECT_EQ(s->locks[0].owner.load(), uint32_t(getpid()));
    unlock(&s->locks[0]);
    EXPECT_EQ(s->locks[0].owner.load(), 0u);
    // A forked child records its own id, not its parent's.
    EXPECT_EQ(in_child([&] {
                  lock(&s->locks[0]);
                  bool ok = s->locks[0].owner.load() == uint32_t(getpid()) && lock_owner_id == uint32_t(getpid());
                  unlock(&s->locks[0]);
                  return ok ? 0 : 1;
              }),
              0);
    munmap(s, sizeof(Shared));
}

// A fresh holder's first lock (take(), as window_dispatch() takes its
// target's) is held and recorded, then moves (switch_to()) and is
// released when the holder goes; take(nullptr) holds none.
TEST(TargetLock, HolderTakesMovesAndReleases)
{
    Shared *s = map_shared();
    ASSERT_NE(s, nullptr);
    {
        HeldLock none;
        none.take(nullptr);
        EXPECT_EQ(s->locks[0].owner.load(), 0u);
        HeldLock held;
        held.take(&s->locks[0]);
        EXPECT_EQ(s->locks[0].owner.load(), uint32_t(getpid()));
        held.switch_to(&s->locks[1]);
        EXPECT_EQ(s->locks[0].owner.load(), 0u);
        EXPECT_EQ(s->locks[1].owner.load(), uint32_t(getpid()));
    }
    EXPECT_EQ(s->locks[1].owner.load(), 0u);
    munmap(s, sizeof(Shared));
}

// Read-modify-writes under the lock from several processes at once lose
// nothing; a HeldLock moving between two targets never holds both.
TEST(TargetLock, ExcludesAcrossProcesses)
{
    Shared *s = map_shared();
    ASSERT_NE(s, nullptr);
    constexpr int kProcs = 3, kRounds = 100000;
    pid_t kids[kProcs];
    for (int i = 0; i < kProcs; ++i) {
        kids[i] = fork();
        ASSERT_GE(kids[i], 0);
        if (kids[i] == 0) {
            alarm(120);  // hang guard
            HeldLock held;
            s->ready.fetch_add(1);
            while (s->ready.load() < kProcs) sched_yield();
            for (int k = 0; k < kRounds; ++k) {
                const int t = (k + i) % 2;
                held.switch_to(&s->locks[t]);
                // A read-modify-write with a window another process would
                // fall into without the lock.
                const int64_t v = s->counter[t];
                for (volatile int spin = 0; spin < 20; spin = spin + 1) {
                }
                s->counter[t] = v + 1;
            }
            held.switch_to(nullptr);
            _exit(0);
        }
    }
    for (int i = 0; i < kProcs; ++i) {
        int status = 0;
        ASSERT_EQ(waitpid(kids[i], &status, 0), kids[i]);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_EQ(s->counter[0] + s->counter[1], int64_t(kProcs) * kRounds);
    EXPECT_EQ(s->locks[0].owner.load(), 0u);
    EXPECT_EQ(s->locks[1].owner.load(), 0u);
    munmap(s, sizeof(Shared));
}

// A process that dies holding a lock (killed while its code ran on a peer's
// window) does not hang the node: the next process to want it takes it over.
TEST(TargetLock, DeadOwnerIsTakenOver)
{
    Shared *s = map_shared();
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(in_child([&] {
                  lock(&s->locks[1]);
                  return 0;  // exits holding it
              }),
              0);
    ASSERT_NE(s->locks[1].owner.load(), 0u);
    EXPECT_EQ(in_child([&] {
                  lock(&s->locks[1]);
                  bool ok = s->locks[1].owner.load() == uint32_t(getpid());
                  unlock(&s->locks[1]);
                  return ok ? 0 : 1;
              }),
              0);
    EXPECT_EQ(s->locks[1].owner.load(), 0u);
    munmap(s, sizeof(Shared));
}
