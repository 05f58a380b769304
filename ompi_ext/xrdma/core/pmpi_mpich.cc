// MPICH's calls that wait, interposed so that a target serves X-ops while it
// waits in them, as Open MPI's progress engine makes it do in any call
// (mpi_impl.h): MPICH runs nothing of XRDMA's in its own waits.
//
// - Waits (MPI_Wait*) test until done, with a pass of XRDMA's progress
//   between two tests; tests (MPI_Test*, MPI_Iprobe, MPI_Improbe) make one
//   pass first.
// - Point-to-point calls that block (MPI_Recv, MPI_Send, MPI_Ssend,
//   MPI_Sendrecv, MPI_Probe, MPI_Mprobe) start their nonblocking form and
//   wait for it so.
// - Blocking collectives run as their nonblocking form, whether or not this
//   process serves anything: MPICH does not match a blocking collective
//   with a nonblocking one, so every process must make the same choice
//   (every process of the job links XRDMA, as with any PMPI tool).
// - Communicator creation meets first (mpi_meet()): the processes wait
//   inside it for each other without serving.
// While this process has no window, waits and point-to-point calls are
// MPICH's own. An Rx request's error reaches the application only through
// these wrappers (MPICH's own waits report none: mpi_impl.h).
#include "mpi_impl.h"
#include "mpi_mpich.h"

#include <vector>

using namespace xrdma::mpi;

namespace {

bool serving() { return Runtime::get().has_windows(); }

// A pass of XRDMA's progress before a test looks.
void serve_once()
{
    if (serving()) Runtime::get().try_progress();
}

// Start a nonblocking call (int(MPI_Request *)) and wait for it serving.
template <typename Start>
int start_and_wait(Start &&start, MPI_Status *st = MPI_STATUS_IGNORE)
{
    MPI_Request r;
    const int rc = start(&r);
    return rc != MPI_SUCCESS ? rc : serve_wait(&r, st);
}

// The requests one wait or test completes, and the errors of the Rx
// requests among them (t_request_errors, filled by their query functions
// during the call).
class Completed {
public:
    Completed() { t_request_errors.clear(); }  // (what an earlier call left: not this call's)
    Completed(int n, const MPI_Request *r)
    {
        t_request_errors.clear();
        if (n > 0) handles_.assign(r, r + n);
    }

    // The one request @p h completed with result @p rc.
    int one(MPI_Request h, int rc) { return rc == MPI_SUCCESS ? report(take(h)) : rc; }
    // Request @p index of the array.
    int any(int rc, int index)
    {
        if (rc != MPI_SUCCESS || index < 0 || size_t(index) >= handles_.size()) return rc;
        return one(handles_[size_t(index)], rc);
    }
    // @p n requests: all of the array (@p indices nullptr) or those of @p indices.
    int all(int rc, int n, const int *indices, MPI_Status *statuses)
    {
        if (t_request_errors.empty() || n <= 0 || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) return rc;
        bool failed = false;
        for (int k = 0; k < n; ++k) {
            const int i = indices ? indices[k] : k;
            if (i < 0 || size_t(i) >= handles_.size()) continue;
            const int err = take(handles_[size_t(i)]);
            if (err != MPI_SUCCESS) failed = true;
            if (statuses == MPI_STATUSES_IGNORE) continue;
            MPI_Status &st = statuses[indices ? k : i];
            if (err != MPI_SUCCESS || rc == MPI_SUCCESS) st.MPI_ERROR = err;
        }
        return failed ? report(MPI_ERR_IN_STATUS) : rc;
    }

private:
    std::vector<MPI_Request> handles_;
    static int take(MPI_Request h)
    {
        auto it = t_request_errors.find(h);
        if (it == t_request_errors.end()) return MPI_SUCCESS;
        const int err = it->second;
        t_request_errors.erase(it);
        return err;
    }
    static int report(int err)
    {
        if (err != MPI_SUCCESS) PMPI_Comm_call_errhandler(MPI_COMM_WORLD, err);
        return err;
    }
};

}  // namespace

extern "C" {

// ---- waits and tests
// An Rx request whose X-op failed completes without error in MPICH's eyes
// (mpi_impl.h: mpi_grequest_query_result()); its error is reported here, as
// Open MPI reports it: the call's return value (MPI_ERR_IN_STATUS and the
// statuses for several requests), through MPI_COMM_WORLD's handler.

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    const MPI_Request h = *request;
    Completed done;
    return done.one(h, serve_wait(request, status));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (!serving()) return PMPI_Waitall(count, requests, statuses);
    Completed done(count, requests);
    const int rc = serve_until([&](int *all) { return PMPI_Testall(count, requests, all, statuses); });
    return done.all(rc, count, nullptr, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    if (!serving()) return PMPI_Waitany(count, requests, index, status);
    Completed done(count, requests);
    const int rc = serve_until([&](int *one) { return PMPI_Testany(count, requests, index, one, status); });
    return done.any(rc, *index);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    if (!serving()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    Completed done(incount, requests);
    const int rc = serve_until([&](int *some) {
        const int r = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        *some = *outcount != 0;  // (MPI_UNDEFINED: no active request)
        return r;
    });
    return done.all(rc, *outcount, indices, statuses);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    serve_once();
    const MPI_Request h = *request;
    Completed done;
    const int rc = PMPI_Test(request, flag, status);
    return *flag ? done.one(h, rc) : rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    serve_once();
    Completed done(count, requests);
    const int rc = PMPI_Testall(count, requests, flag, statuses);
    return *flag ? done.all(rc, count, nullptr, statuses) : rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    serve_once();
    Completed done(count, requests);
    const int rc = PMPI_Testany(count, requests, index, flag, status);
    return *flag ? done.any(rc, *index) : rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
    serve_once();
    Completed done(incount, requests);
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    return done.all(rc, *outcount, indices, statuses);
}

// ---- point to point

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!serving()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
    return start_and_wait([&](MPI_Request *r) { return PMPI_Irecv(buf, count, type, source, tag, comm, r); },
                          status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!serving()) return PMPI_Send(buf, count, type, dest, tag, comm);
    return start_and_wait([&](MPI_Request *r) { return PMPI_Isend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    if (!serving()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
    return start_and_wait([&](MPI_Request *r) { return PMPI_Issend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!serving())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                             recvtag, comm, status);
    MPI_Request r[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    MPI_Status st[2];
    rc = serve_until([&](int *done) { return PMPI_Testall(2, r, done, st); });
    if (status != MPI_STATUS_IGNORE) *status = st[0];
    return rc == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR) : rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!serving()) return PMPI_Probe(source, tag, comm, status);
    return serve_until([&](int *done) { return PMPI_Iprobe(source, tag, comm, done, status); });
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!serving()) return PMPI_Mprobe(source, tag, comm, message, status);
    return serve_until([&](int *done) { return PMPI_Improbe(source, tag, comm, done, message, status); });
}

// Probes that test: a pass first, as the tests above (a program that polls
// with MPI_Iprobe alone serves X-ops meanwhile, as under Open MPI).
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    serve_once();
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    serve_once();
    return PMPI_Improbe(source, tag, comm, flag, message, status);
}

// ---- collectives: always in their nonblocking form

int MPI_Barrier(MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) { return PMPI_Ibarrier(comm, r); });
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) { return PMPI_Ibcast(buf, count, type, root, comm, r); });
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    return start_and_wait(
        [&](MPI_Request *r) { return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, r); });
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) { return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, r); });
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
    });
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, r);
    });
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
    });
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
    });
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
    });
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, r);
    });
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
    });
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                               comm, r);
    });
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, r);
    });
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) { return PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, r); });
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return start_and_wait([&](MPI_Request *r) { return PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, r); });
}

// ---- communicator creation: the processes meet first

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    const int rc = mpi_meet(comm);
    return rc != MPI_SUCCESS ? rc : PMPI_Comm_dup(comm, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const int rc = mpi_meet(comm);
    return rc != MPI_SUCCESS ? rc : PMPI_Comm_split(comm, color, key, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    const int rc = mpi_meet(comm);
    return rc != MPI_SUCCESS ? rc : PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
}

}  // extern "C"
