#include "errors.h"
#include "mpi_impl.h"

#include "core_api.h"

#include <cstdint>
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
std::map<int, int> g_class_codes;  // those codes, by class

// @p s as text that fits @p max bytes: UTF-8 without control characters.
// A message may quote a file name or bytes of an image, which need be
// neither; a program (Python's str(e) among them) decodes it as UTF-8. A
// byte that does not start a well-formed character, and a control
// character, become '?'; the cut falls between two characters.
std::string as_text(const std::string &s, size_t max)
{
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80                 ? 1
                         : c >= 0xc2 && c <= 0xdf ? 2
                         : c >= 0xe0 && c <= 0xef ? 3
                         : c >= 0xf0 && c <= 0xf4 ? 4
                                                  : 0;
        uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
        bool ok = n != 0 && i + n <= s.size();
        for (size_t k = 1; ok && k < n; ++k) {
            const unsigned char b = static_cast<unsigned char>(s[i + k]);
            ok = (b & 0xc0) == 0x80;
            cp = cp << 6 | (b & 0x3f);
        }
        // Shortest form only, no surrogates, nothing past U+10FFFF.
        ok = ok && (n < 3 || (n == 3 ? cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff) : cp >= 0x10000 && cp <= 0x10ffff));
        const bool control = cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
        const size_t take = ok ? n : 1;
        if (out.size() + (ok && !control ? n : 1) > max) break;
        if (ok && !control)
            out.append(s, i, n);
        else
            out += '?';
        i += take;
    }
    return out;
}

// The code of @p cls past kMaxCodes, whose string is the class's. For an
// added class it is not the class's own number: Open MPI 4.1 answers
// MPI_Error_class(MPIX_ERR_PEER) with MPI_ERR_UNKNOWN.
int class_code(int cls)
{
    if (cls <= MPI_ERR_LASTCODE) return cls;
    auto it = g_class_codes.find(cls);
    if (it != g_class_codes.end()) return it->second;
    int code, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    if (MPI_Add_error_code(cls, &code) != MPI_SUCCESS) return cls;
    MPI_Error_string(cls, text, &len);
    MPI_Add_error_string(code, text);
    g_class_codes.emplace(cls, code);
    return code;
}

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
    if (g_codes.size() >= kMaxCodes) return class_code(cls);
    std::string text = as_text(message, MPI_MAX_ERROR_STRING - 1);
    const int code = mpi_error_code(cls, text);
    if (code == cls) return class_code(cls);
    g_codes.emplace(key, code);
    return code;
}

}  // namespace xrdma::mpi

extern "C" int xrdma_mpi_error_code(int cls, const char *message)
{
    return xrdma::mpi::error_code(cls, message ? message : "");
}
