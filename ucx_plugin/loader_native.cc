#include "loader_native.h"

#include "elf.h"
#include "log.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace xrdma {

namespace {

class NativeCode : public LoadedCode {
public:
    explicit NativeCode(void *handle) : handle_(handle) {}
    ~NativeCode() override { dlclose(handle_); }
    void *symbol(const std::string &name) const override { return dlsym(handle_, name.c_str()); }

private:
    void *handle_;
};

std::string triples_of(const ImageView &img)
{
    std::string s;
    for (const PartView &p : img.parts) {
        if (!s.empty()) s += ", ";
        s += (p.kind == PartKind::native_elf ? "native " : "bitcode ");
        s += std::string(p.triple);
    }
    return s.empty() ? "none" : s;
}

}  // namespace

ucx_ifunc_status_t load_native(const ImageView &img, const std::string &label,
                               std::unique_ptr<LoadedCode> *out, std::string *why)
{
    const PartView *part = nullptr;
    for (const PartView &p : img.parts)
        if (p.kind == PartKind::native_elf && p.triple == host_triple()) part = &p;
    if (!part) {
        *why = "image has no native part for " + host_triple() + " (it has: " + triples_of(img) + ")";
        return UCX_IFUNC_ERR_NO_PART;
    }
    ElfInfo elf;
    ucx_ifunc_status_t st = elf_inspect(part->data, part->size, &elf, why);
    if (st != UCX_IFUNC_OK) return st;
    if (elf.machine != elf_host_machine()) {
        *why = "native part is ELF for machine " + std::to_string(elf.machine) +
               ", this process runs on machine " + std::to_string(elf_host_machine());
        return UCX_IFUNC_ERR_BAD_CODE;
    }

    int fd = memfd_create(("xrdma:" + label).c_str(), MFD_CLOEXEC);
    if (fd < 0) {
        *why = std::string("memfd_create: ") + strerror(errno);
        return UCX_IFUNC_ERR_NO_MEMORY;
    }
    size_t done = 0;
    while (done < part->size) {
        ssize_t n = write(fd, part->data + done, part->size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *why = std::string("writing code to memfd: ") + strerror(errno);
            close(fd);
            return UCX_IFUNC_ERR_NO_MEMORY;
        }
        done += size_t(n);
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    close(fd);  // the mapping keeps the code alive
    if (!handle) {
        const char *err = dlerror();
        *why = std::string("loading native code failed: ") + (err ? err : "unknown dlopen error");
        return UCX_IFUNC_ERR_LINK;
    }
    XRDMA_DEBUG("loaded native code %s (%zu bytes)", label.c_str(), part->size);
    *out = std::make_unique<NativeCode>(handle);
    return UCX_IFUNC_OK;
}

}  // namespace xrdma
