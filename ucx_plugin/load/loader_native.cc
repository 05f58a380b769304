#include "load/loader_native.h"

#include "image/elf_reader.h"
#include "xrdma_common/log.h"
#include "load/policy.h"
#include "load/start_files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>

namespace xrdma {

namespace {

// glibc's dlopen() returns an already loaded object whose *name* matches, so
// the memfd stays open while its code is loaded: no other image can be
// opened under the same /proc/self/fd/N meanwhile.
class NativeCode : public LoadedCode {
public:
    NativeCode(void *handle, int fd, std::string path) : handle_(handle), fd_(fd), path_(std::move(path)) {}
    ~NativeCode() override
    {
        dlclose(handle_);
        // An object glibc keeps loaded (RTLD_NODELETE, unique symbols) keeps
        // its fd, so the name is never reused.
        void *still = dlopen(path_.c_str(), RTLD_NOW | RTLD_NOLOAD);
        if (still)
            dlclose(still);
        else
            close(fd_);
    }
    // Only the object's own code: dlsym() on a handle also searches the
    // object's dependencies, so an image listing an entry it does not define
    // (say "memcpy") would otherwise be handed libc's function as its entry.
    void *symbol(const std::string &name) const override
    {
        void *p = dlsym(handle_, name.c_str());
        return p && contains(reinterpret_cast<uintptr_t>(p)) ? p : nullptr;
    }
    bool contains(uintptr_t pc) const override
    {
        for (const auto &r : exec_)
            if (pc >= r.first && pc < r.second) return true;
        return false;
    }

    // Record the executable segments of the loaded object.
    void find_segments()
    {
        struct link_map *lm = nullptr;
        if (dlinfo(handle_, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return;
        struct Arg {
            uintptr_t base;
            std::vector<std::pair<uintptr_t, uintptr_t>> *out;
        } arg{uintptr_t(lm->l_addr), &exec_};
        dl_iterate_phdr(
            [](struct dl_phdr_info *info, size_t, void *p) {
                auto *a = static_cast<Arg *>(p);
                if (uintptr_t(info->dlpi_addr) != a->base) return 0;
                for (int i = 0; i < info->dlpi_phnum; ++i) {
                    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
                        a->out->emplace_back(a->base + ph.p_vaddr, a->base + ph.p_vaddr + ph.p_memsz);
                }
                return 1;
            },
            &arg);
    }

private:
    void *handle_;
    int fd_;
    std::string path_;
    std::vector<std::pair<uintptr_t, uintptr_t>> exec_;
};

std::string machine_name(uint16_t m)
{
    switch (m) {
    case 62: return "62 (x86-64)";
    case 183: return "183 (AArch64)";
    case 3: return "3 (i386)";
    case 40: return "40 (ARM)";
    case 243: return "243 (RISC-V)";
    case 21: return "21 (PowerPC64)";
    default: return std::to_string(m);
    }
}

}  // namespace

std::vector<std::string> native_imports(const ElfInfo &elf)
{
    // Its imports, and the symbols it defines itself but refers to through
    // a relocation with default visibility: the loader looks those up in
    // the process first, so a definition of, say, "system" would bind to
    // the process's.
    std::vector<std::string> imports;
    for (const ElfSymbol &sym : elf.dynsyms) {
        if (!sym.defined)
            imports.push_back(sym.name);
        else if (sym.relocated && sym.bind != 0 /* STB_LOCAL */ && sym.visibility == 0 /* STV_DEFAULT */ &&
                 dlsym(RTLD_DEFAULT, sym.name.c_str()))
            imports.push_back(sym.name);
    }
    return imports;
}

const PartView *host_native_part(const ImageView &img)
{
    const PartView *part = nullptr;
    for (const PartView &p : img.parts)
        if (p.kind == PartKind::native_elf && triple_is_host(p.triple)) part = &p;
    return part;
}

ucx_ifunc_status_t load_native(const ImageView &img, const std::string &label,
                               std::unique_ptr<LoadedCode> *out, std::string *why)
{
    const PartView *part = host_native_part(img);
    if (!part) {
        *why = "image has no native part for " + host_triple() + " (it has: " + describe_parts(img) + ")";
        return UCX_IFUNC_ERR_NO_PART;
    }
    ElfInfo elf;
    ucx_ifunc_status_t st = elf_inspect(part->data, part->size, &elf, why);
    if (st != UCX_IFUNC_OK) return st;
    if (elf.machine != elf_host_machine()) {
        *why = "native part is ELF for machine " + machine_name(elf.machine) + ", this process runs on machine " +
               machine_name(elf_host_machine());
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    // Nothing of the image may run before an entry is called. The start
    // files' entries are dropped from the copy that is loaded (see
    // start_files.cc); the author's constructors and destructors, and
    // everything else elf_inspect() lists, refuse the image.
    LoadPlan plan;
    st = start_files_plan(part->data, part->size, &plan, why);
    if (st != UCX_IFUNC_OK) return st;
    auto by_start_files = [](const std::string &what) {
        return what.compare(0, 7, "DT_INIT") == 0 || what.compare(0, 7, "DT_FINI") == 0;
    };
    elf.load_code.erase(std::remove_if(elf.load_code.begin(), elf.load_code.end(), by_start_files),
                        elf.load_code.end());
    elf.load_code.insert(elf.load_code.begin(), plan.user.begin(), plan.user.end());
    st = elf_check_load_code(elf, why);
    if (st != UCX_IFUNC_OK) return st;
    const std::vector<uint8_t> loaded = start_files_strip(part->data, part->size, plan);
    // An entry the code defines must be code (a missing one is NO_ENTRY
    // when it is invoked).
    for (const std::string_view entry : img.entries)
        for (const ElfSymbol &sym : elf.dynsyms)
            if (sym.defined && sym.name == entry && !sym.in_code) {
                *why = "native part defines entry '" + sym.name + "' outside its code";
                return UCX_IFUNC_ERR_BAD_CODE;
            }
    // What the image binds to in this process.
    const std::vector<std::string> imports = native_imports(elf);
    st = policy_check_imports(imports, why);
    if (st != UCX_IFUNC_OK) return st;
    // Libraries it would make the loader load (and run the constructors of).
    for (const std::string &lib : elf.needed) {
        st = policy_check_library(lib, why);
        if (st != UCX_IFUNC_OK) return st;
    }

    int fd = memfd_create(("xrdma:" + label).c_str(), MFD_CLOEXEC);
    if (fd < 0) {
        *why = std::string("memfd_create: ") + strerror(errno);
        return UCX_IFUNC_ERR_NO_MEMORY;
    }
    size_t done = 0;
    while (done < loaded.size()) {
        ssize_t n = write(fd, loaded.data() + done, loaded.size() - done);
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
    if (dlopen(path, RTLD_NOW | RTLD_NOLOAD)) {
        // Cannot happen while every loaded memfd keeps its fd; refuse rather
        // than run some other image's code.
        close(fd);
        *why = std::string("internal error: ") + path + " names code that is already loaded";
        return UCX_IFUNC_ERR_LINK;
    }
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        close(fd);
        const char *err = dlerror();
        *why = std::string("loading native code failed: ") + (err ? err : "unknown dlopen error");
        return UCX_IFUNC_ERR_LINK;
    }
    XRDMA_DEBUG("loaded native code %s (%zu bytes)", label.c_str(), part->size);
    auto code = std::make_unique<NativeCode>(handle, fd, path);
    code->find_segments();
    std::string pin = policy_target_state_import(imports);
    code->why_pinned = !pin.empty()            ? "it calls " + pin
                       : !elf.writable_data.empty() ? "it has writable data: " + elf.writable_data[0]
                                                    : "";
    code->movable = code->why_pinned.empty();
    code->imports = imports;
    std::sort(code->imports.begin(), code->imports.end());
    code->imports_known = true;
    *out = std::move(code);
    return UCX_IFUNC_OK;
}

}  // namespace xrdma
