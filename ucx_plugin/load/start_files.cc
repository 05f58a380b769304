// Libraries as toolchains build them (`cc -shared -fPIC`) carry the C start
// files: DT_INIT -> _init (crti.o/crtn.o: calls __gmon_start__ when profiling),
// DT_INIT_ARRAY -> frame_dummy (crtbeginS.o: register_tm_clones, for
// transactional-memory clone tables), DT_FINI_ARRAY -> __do_global_dtors_aux
// (crtbeginS.o: __cxa_finalize for the object's atexit handlers and
// deregister_tm_clones), DT_FINI -> _fini. None of it is needed by injected
// code (it registers no TM clones, and atexit handlers are not in the
// policy's allowed set), so the target does not run it: it loads a copy
// whose dynamic section lacks those entries. Because the entries are removed,
// not trusted, a misrecognised function can only fail to run, never run at
// load; recognition (symbol name and section, from the object's symbol
// table) only decides between dropping an entry silently and refusing the
// object with the name of the author's constructor or destructor.
#include "load/start_files.h"

#include <algorithm>
#include <cstring>

namespace xrdma {

namespace {

enum : uint64_t {
    kDtNull = 0, kDtRela = 7, kDtRelaSz = 8, kDtInit = 12, kDtFini = 13, kDtRpath = 15, kDtInitArray = 25,
    kDtFiniArray = 26, kDtInitArraySz = 27, kDtFiniArraySz = 28, kDtRunpath = 29,
};
constexpr uint64_t kMaxCrtSection = 32;  // crti+crtn's _init/_fini: 13 to 27 bytes

template <typename T> bool get(const uint8_t *d, size_t n, uint64_t off, T *out)
{
    if (off > n || sizeof(T) > n - off) return false;
    memcpy(out, d + off, sizeof(T));
    return true;
}

class Plan {
public:
    Plan(const uint8_t *d, size_t n) : d_(d), n_(n) {}

    bool read()
    {
        uint64_t phoff, shoff;
        uint16_t phnum, shnum, shstrndx;
        if (!get(d_, n_, 0x20, &phoff) || !get(d_, n_, 0x28, &shoff) || !get(d_, n_, 0x38, &phnum) ||
            !get(d_, n_, 0x3c, &shnum) || !get(d_, n_, 0x3e, &shstrndx))
            return false;
        for (uint16_t i = 0; i < phnum; ++i) {
            const uint64_t p = phoff + uint64_t(i) * 56;
            uint32_t type;
            uint64_t off, vaddr, filesz;
            if (!get(d_, n_, p, &type) || !get(d_, n_, p + 8, &off) || !get(d_, n_, p + 16, &vaddr) ||
                !get(d_, n_, p + 32, &filesz))
                return false;
            if (type == 1) loads_.push_back({vaddr, off, filesz});
            if (type == 2) dyn_off_ = off, dyn_size_ = filesz;
        }
        for (uint64_t e = dyn_off_; e + 16 <= dyn_off_ + dyn_size_; e += 16) {
            uint64_t tag, val;
            if (!get(d_, n_, e, &tag) || !get(d_, n_, e + 8, &val)) return false;
            if (tag == kDtNull) break;
            dyn_.push_back({tag, val, e});
        }
        for (uint16_t i = 0; i < shnum; ++i) {
            const uint64_t s = shoff + uint64_t(i) * 64;
            Section sec;
            if (!get(d_, n_, s, &sec.name) || !get(d_, n_, s + 4, &sec.type) || !get(d_, n_, s + 24, &sec.off) ||
                !get(d_, n_, s + 32, &sec.size) || !get(d_, n_, s + 40, &sec.link))
                return false;
            secs_.push_back(sec);
        }
        shstrndx_ = shstrndx;
        return true;
    }

    // What an entry of the dynamic section makes run, by name, or "" if it
    // is the start files'.
    void classify(LoadPlan *plan)
    {
        bool init_array_crt = true, fini_array_crt = true;
        for (const Dyn &e : dyn_) {
            if (e.tag == kDtRpath || e.tag == kDtRunpath) plan->drop.push_back(e.off);
            if (e.tag == kDtInit || e.tag == kDtFini) {
                const char *crt = e.tag == kDtInit ? "_init" : "_fini";
                std::string sec;
                const std::string name = symbol_at(e.val, &sec);
                if (name == crt && sec == std::string(".") + (crt + 1) && section_size(sec) <= kMaxCrtSection)
                    plan->drop.push_back(e.off);
                else
                    plan->user.push_back(std::string(e.tag == kDtInit ? "DT_INIT" : "DT_FINI") + " function " +
                                         describe(e.val, name));
            }
            if (e.tag == kDtInitArray || e.tag == kDtFiniArray) {
                const bool init = e.tag == kDtInitArray;
                const uint64_t count = value(init ? kDtInitArraySz : kDtFiniArraySz) / 8;
                for (uint64_t i = 0; i < count; ++i) {
                    uint64_t target = 0;
                    std::string name, sec;
                    if (pointer_at(e.val + 8 * i, &target)) name = symbol_at(target, &sec);
                    if (name == (init ? "frame_dummy" : "__do_global_dtors_aux") && sec == ".text") continue;
                    (init ? init_array_crt : fini_array_crt) = false;
                    plan->user.push_back(std::string(init ? "constructor " : "destructor ") + describe(target, name));
                }
            }
        }
        for (const Dyn &e : dyn_) {
            if ((e.tag == kDtInitArray || e.tag == kDtInitArraySz) && init_array_crt) plan->drop.push_back(e.off);
            if ((e.tag == kDtFiniArray || e.tag == kDtFiniArraySz) && fini_array_crt) plan->drop.push_back(e.off);
        }
        std::sort(plan->drop.begin(), plan->drop.end());
    }

    uint64_t dyn_off() const { return dyn_off_; }
    uint64_t dyn_size() const { return dyn_size_; }

private:
    struct Load { uint64_t vaddr, off, filesz; };
    struct Dyn { uint64_t tag, val, off; };
    struct Section {
        uint32_t name = 0, type = 0;
        uint64_t off = 0, size = 0;
        uint32_t link = 0;
    };

    static std::string describe(uint64_t addr, const std::string &name)
    {
        char hex[32];
        snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(addr));
        return name.empty() ? std::string("at ") + hex + " (no symbol names it)" : "'" + name + "'";
    }
    uint64_t value(uint64_t tag) const
    {
        for (const Dyn &e : dyn_)
            if (e.tag == tag) return e.val;
        return 0;
    }
    bool file_off(uint64_t vaddr, uint64_t len, uint64_t *off) const
    {
        for (const Load &l : loads_)
            if (vaddr >= l.vaddr && vaddr - l.vaddr <= l.filesz && len <= l.filesz - (vaddr - l.vaddr)) {
                *off = l.off + (vaddr - l.vaddr);
                return true;
            }
        return false;
    }
    // The address a pointer in the object's data holds once relocated: the
    // addend of its RELATIVE relocation, else the bytes in the file.
    bool pointer_at(uint64_t vaddr, uint64_t *out) const
    {
        uint64_t rela;
        const uint64_t relasz = value(kDtRelaSz);
        if (value(kDtRela) && file_off(value(kDtRela), relasz, &rela))
            for (uint64_t r = rela; r + 24 <= rela + relasz; r += 24) {
                uint64_t off, info, addend;
                if (!get(d_, n_, r, &off) || !get(d_, n_, r + 8, &info) || !get(d_, n_, r + 16, &addend)) return false;
                const uint32_t type = uint32_t(info);
                if (off == vaddr && (type == 8 /* x86-64 */ || type == 1027 /* AArch64 */)) {
                    *out = addend;
                    return true;
                }
            }
        uint64_t off;
        return file_off(vaddr, 8, &off) && get(d_, n_, off, out);
    }
    std::string string_at(const Section &strtab, uint64_t off) const
    {
        if (off >= strtab.size || strtab.off > n_ || strtab.size > n_ - strtab.off) return "";
        const char *s = reinterpret_cast<const char *>(d_ + strtab.off + off);
        return std::string(s, strnlen(s, strtab.size - off));
    }
    std::string section_name(size_t i) const
    {
        if (i >= secs_.size() || shstrndx_ >= secs_.size()) return "";
        return string_at(secs_[shstrndx_], secs_[i].name);
    }
    uint64_t section_size(const std::string &name) const
    {
        for (size_t i = 0; i < secs_.size(); ++i)
            if (section_name(i) == name) return secs_[i].size;
        return UINT64_MAX;
    }
    // The function symbol at @p addr (the full symbol table first: the start
    // files' functions are local) and its section's name.
    std::string symbol_at(uint64_t addr, std::string *section) const
    {
        for (uint32_t type : {2u /* SHT_SYMTAB */, 11u /* SHT_DYNSYM */})
            for (const Section &s : secs_) {
                if (s.type != type || s.link >= secs_.size()) continue;
                for (uint64_t y = s.off; y + 24 <= s.off + s.size; y += 24) {
                    uint32_t name;
                    uint8_t info;
                    uint16_t shndx;
                    uint64_t value;
                    if (!get(d_, n_, y, &name) || !get(d_, n_, y + 4, &info) || !get(d_, n_, y + 6, &shndx) ||
                        !get(d_, n_, y + 8, &value))
                        break;
                    if (value != addr || (info & 0xf) != 2 /* STT_FUNC */) continue;
                    *section = section_name(shndx);
                    return string_at(secs_[s.link], name);
                }
            }
        return "";
    }

    const uint8_t *d_;
    size_t n_;
    std::vector<Load> loads_;
    std::vector<Dyn> dyn_;
    std::vector<Section> secs_;
    uint16_t shstrndx_ = 0;
    uint64_t dyn_off_ = 0, dyn_size_ = 0;
};

}  // namespace

ucx_ifunc_status_t start_files_plan(const uint8_t *data, size_t size, LoadPlan *plan, std::string *why)
{
    Plan p(data, size);
    if (!p.read()) {
        *why = "ELF: cannot read the headers or dynamic section again";
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    p.classify(plan);
    return UCX_IFUNC_OK;
}

std::vector<uint8_t> start_files_strip(const uint8_t *data, size_t size, const LoadPlan &plan)
{
    std::vector<uint8_t> copy(data, data + size);
    if (plan.drop.empty()) return copy;
    Plan p(data, size);
    if (!p.read()) return copy;
    // Move every kept entry (the terminating DT_NULL included) up over the
    // dropped ones; zero entries (DT_NULL) fill the end.
    uint64_t out = p.dyn_off();
    for (uint64_t e = p.dyn_off(); e + 16 <= p.dyn_off() + p.dyn_size(); e += 16) {
        if (std::binary_search(plan.drop.begin(), plan.drop.end(), e)) continue;
        memmove(copy.data() + out, data + e, 16);
        out += 16;
    }
    memset(copy.data() + out, 0, p.dyn_off() + p.dyn_size() - out);
    return copy;
}

}  // namespace xrdma
