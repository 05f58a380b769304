#include "errors.h"

#include <map>
#include <mutex>

int MPIX_ERR_IFUNC_IMAGE = MPI_ERR_OTHER;
int MPIX_ERR_IFUNC_LINK = MPI_ERR_OTHER;
int MPIX_ERR_IFUNC_DENIED = MPI_ERR_OTHER;
int MPIX_ERR_IFUNC_FAULT = MPI_ERR_OTHER;
int MPIX_ERR_IFUNC_RETURN = MPI_ERR_OTHER;
int MPIX_ERR_IFUNC_TIMEOUT = MPI_ERR_OTHER;
int MPIX_ERR_PEER = MPI_ERR_OTHER;

namespace xrdma::mpi {

namespace {
std::mutex g_lock;
bool g_ready = false;
std::map<std::pair<int, std::string>, int> g_codes;
constexpr size_t kMaxCodes = 4096;  // distinct messages; then one code per class

void add_class(int *cls, const char *what)
{
    if (MPI_Add_error_class(cls) != MPI_SUCCESS) return;
    MPI_Add_error_string(*cls, const_cast<char *>(what));
}
}  // namespace

void errors_init()
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_ready) return;
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) return;
    add_class(&MPIX_ERR_IFUNC_IMAGE, "MPIX_ERR_IFUNC_IMAGE: invalid ifunc image");
    add_class(&MPIX_ERR_IFUNC_LINK, "MPIX_ERR_IFUNC_LINK: ifunc code could not be loaded at the target");
    add_class(&MPIX_ERR_IFUNC_DENIED, "MPIX_ERR_IFUNC_DENIED: ifunc refused by the target's policy");
    add_class(&MPIX_ERR_IFUNC_FAULT, "MPIX_ERR_IFUNC_FAULT: ifunc faulted at the target");
    add_class(&MPIX_ERR_IFUNC_RETURN, "MPIX_ERR_IFUNC_RETURN: ifunc returned an error");
    add_class(&MPIX_ERR_IFUNC_TIMEOUT, "MPIX_ERR_IFUNC_TIMEOUT: ifunc ran past XRDMA_IFUNC_TIMEOUT and was stopped");
    add_class(&MPIX_ERR_PEER, "MPIX_ERR_PEER: target unreachable or failed");
    g_ready = true;
}

int error_class_of(ucx_ifunc_status_t st)
{
    switch (st) {
    case UCX_IFUNC_OK:
    case UCX_IFUNC_INPROGRESS: return MPI_SUCCESS;
    case UCX_IFUNC_ERR_TRUNCATED:
    case UCX_IFUNC_ERR_BAD_MAGIC:
    case UCX_IFUNC_ERR_BAD_VERSION:
    case UCX_IFUNC_ERR_BAD_LENGTH:
    case UCX_IFUNC_ERR_HASH_MISMATCH:
    case UCX_IFUNC_ERR_NO_ENTRY:
    case UCX_IFUNC_ERR_BAD_CODE:
    case UCX_IFUNC_ERR_PROTOCOL: return MPIX_ERR_IFUNC_IMAGE;
    case UCX_IFUNC_ERR_NO_PART:
    case UCX_IFUNC_ERR_LINK: return MPIX_ERR_IFUNC_LINK;
    case UCX_IFUNC_ERR_DENIED: return MPIX_ERR_IFUNC_DENIED;
    case UCX_IFUNC_ERR_FAULT: return MPIX_ERR_IFUNC_FAULT;
    case UCX_IFUNC_ERR_TIMEOUT: return MPIX_ERR_IFUNC_TIMEOUT;
    case UCX_IFUNC_ERR_RETURN: return MPIX_ERR_IFUNC_RETURN;
    case UCX_IFUNC_ERR_PEER:
    case UCX_IFUNC_ERR_NO_ROUTE:
    case UCX_IFUNC_ERR_TRANSPORT: return MPIX_ERR_PEER;
    case UCX_IFUNC_ERR_INVALID_PARAM: return MPI_ERR_RMA_RANGE;  // bad target region
    case UCX_IFUNC_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case UCX_IFUNC_ERR_IO: return MPI_ERR_FILE;
    case UCX_IFUNC_ERR_NEED_CODE: return MPI_ERR_INTERN;
    }
    return MPI_ERR_OTHER;
}

int error_code(int cls, const std::string &message)
{
    std::lock_guard<std::mutex> guard(g_lock);
    auto key = std::make_pair(cls, message);
    auto it = g_codes.find(key);
    if (it != g_codes.end()) return it->second;
    if (g_codes.size() >= kMaxCodes) return cls;
    int code;
    if (MPI_Add_error_code(cls, &code) != MPI_SUCCESS) return cls;
    std::string text = message.substr(0, MPI_MAX_ERROR_STRING - 1);
    MPI_Add_error_string(code, const_cast<char *>(text.c_str()));
    g_codes.emplace(key, code);
    return code;
}

}  // namespace xrdma::mpi
