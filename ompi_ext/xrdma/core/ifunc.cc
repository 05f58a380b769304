// MPIX_Ifunc: an image entry loaded at the origin. It is registered with a
// window's ifunc context on first use there; targets never see the file.
#include "xrdma_common/config.h"
#include "xrdma_common/file.h"
#include "errors.h"
#include "runtime.h"
#include "window.h"
#include "core_api.h"

#include <cerrno>
#include <cstring>

using namespace xrdma::mpi;

namespace {
int report(int err) { return MPI_Comm_call_errhandler(MPI_COMM_WORLD, err), err; }
}  // namespace

extern "C" int xrdma_mpi_ifunc_load(const char *path, const void *image, size_t size, const char *name,
                                    MPIX_Ifunc *ifunc)
{
    errors_init();
    const char *call = path ? "MPIX_Ifunc_load" : "MPIX_Ifunc_load_mem";
    if (!ifunc) return report(error_code(MPI_ERR_ARG, std::string(call) + ": ifunc is NULL"));
    if (path == nullptr && image == nullptr)
        return report(error_code(MPI_ERR_ARG, std::string(call) + ": image is NULL"));
    *ifunc = nullptr;
    auto f = std::make_unique<MPIX_Ifunc_s>();
    if (path) {
        // The limit a target applies: a larger image could never run anywhere.
        const unsigned long long max = xrdma::config_get_ull("XRDMA_MAX_IMAGE_SIZE");
        const int err = xrdma::read_whole_file(path, &f->image, size_t(max));
        if (err == EFBIG)
            return report(error_code(error_class_of(UCX_IFUNC_ERR_DENIED), std::string("MPIX_Ifunc_load: ") + path +
                                                                               " is larger than XRDMA_MAX_IMAGE_SIZE=" +
                                                                               std::to_string(max) + " bytes"));
        if (err)
            return report(error_code(MPI_ERR_FILE, std::string("MPIX_Ifunc_load: cannot read ") + path + ": " +
                                                       strerror(err)));
    } else {
        f->image.assign(static_cast<const uint8_t *>(image), static_cast<const uint8_t *>(image) + size);
    }
    // An empty file is the common mistake (a failed build, a truncated
    // copy): say so in the file's terms.
    if (path && f->image.empty())
        return report(error_code(MPIX_ERR_IFUNC_IMAGE, std::string("MPIX_Ifunc_load: ") + path + ": empty file"));
    char entry[256] = "", why[512] = "";
    ucx_ifunc_status_t st = ucx_ifunc_image_check(f->image.data(), f->image.size(), name, entry,
                                                  sizeof(entry), why, sizeof(why));
    if (st != UCX_IFUNC_OK)
        return report(error_code(error_class_of(st), std::string("MPIX_Ifunc_load: ") +
                                                         (path ? path : "image in memory") + ": " + why));
    f->entry = entry;
    // XRDMA_STREAM(name, ...) adds the marker entry <name>__xrdma_stream.
    f->streams = ucx_ifunc_image_check(f->image.data(), f->image.size(), (f->entry + "__xrdma_stream").c_str(),
                                       nullptr, 0, nullptr, 0) == UCX_IFUNC_OK;
    *ifunc = f.release();
    return MPI_SUCCESS;
}

extern "C" int xrdma_mpi_ifunc_free(MPIX_Ifunc *ifunc)
{
    if (!ifunc) return report(error_code(MPI_ERR_ARG, "MPIX_Ifunc_free: ifunc is NULL"));
    if (*ifunc == nullptr) return MPI_SUCCESS;
    Runtime &rt = Runtime::get();
    {
        std::lock_guard<std::recursive_mutex> guard(rt.mu);
        windows_forget_ifunc(*ifunc);
    }
    delete *ifunc;
    *ifunc = nullptr;
    return MPI_SUCCESS;
}
