// Bounds-checked ELF64 little-endian reader (see elf.h).
//
// The constants are spelled out here rather than taken from the system's
// <elf.h>, which this file's own header shadows on the include path.
#include "elf_reader.h"

#include <cstring>
#include <string>

namespace xrdma {

namespace {

// e_ident
constexpr size_t EI_CLASS = 4, EI_DATA = 5, EI_VERSION = 6;
constexpr uint8_t ELFCLASS64 = 2;
constexpr uint8_t ELFDATA2LSB = 1;
constexpr uint32_t EV_CURRENT = 1;
constexpr uint16_t ET_DYN = 3;
constexpr uint16_t EM_X86_64 = 62;
constexpr uint16_t EM_AARCH64 = 183;

constexpr size_t kEhdrSize = 64;
constexpr size_t kShdrSize = 64;
constexpr size_t kSymSize = 24;

constexpr uint32_t SHT_STRTAB = 3;
constexpr uint32_t SHT_DYNSYM = 11;
constexpr uint16_t SHN_UNDEF = 0;

uint16_t ld16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t ld32(const uint8_t *p)
{
    return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
uint64_t ld64(const uint8_t *p) { return uint64_t(ld32(p)) | (uint64_t(ld32(p + 4)) << 32); }

// Is [off, off+len) inside [0, size)? Overflow-safe.
bool in_bounds(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

ucx_ifunc_status_t bad(std::string *why, std::string msg)
{
    if (why) *why = std::move(msg);
    return UCX_IFUNC_ERR_BAD_CODE;
}

struct Shdr {
    uint32_t type;
    uint64_t offset;
    uint64_t size;
    uint32_t link;
    uint64_t entsize;
};

Shdr read_shdr(const uint8_t *p)
{
    return Shdr{ld32(p + 4), ld64(p + 24), ld64(p + 32), ld32(p + 40), ld64(p + 56)};
}

}  // namespace

ucx_ifunc_status_t elf_inspect(const uint8_t *data, size_t size, ElfInfo *out, std::string *why)
{
    if (!data || size < kEhdrSize)
        return bad(why, "ELF: " + std::to_string(size) + " bytes, shorter than an ELF64 header");
    if (memcmp(data, "\x7f" "ELF", 4) != 0) return bad(why, "not an ELF file (bad magic)");
    if (data[EI_CLASS] != ELFCLASS64) return bad(why, "ELF: not a 64-bit object (ELFCLASS64 expected)");
    if (data[EI_DATA] != ELFDATA2LSB) return bad(why, "ELF: not little-endian (ELFDATA2LSB expected)");
    if (data[EI_VERSION] != EV_CURRENT || ld32(data + 20) != EV_CURRENT)
        return bad(why, "ELF: unknown ELF version (EV_CURRENT expected)");

    const uint16_t type = ld16(data + 16);
    if (type != ET_DYN) return bad(why, "ELF: not a shared object (e_type " + std::to_string(type) + ")");
    const uint16_t machine = ld16(data + 18);

    const uint64_t shoff = ld64(data + 40);
    const uint16_t shentsize = ld16(data + 58);
    uint64_t shnum = ld16(data + 60);
    if (shoff == 0) return bad(why, "ELF: no section header table");
    if (shentsize != kShdrSize)
        return bad(why, "ELF: e_shentsize is " + std::to_string(shentsize) + ", expected 64");
    if (!in_bounds(shoff, kShdrSize, size))
        return bad(why, "ELF: section header table at " + std::to_string(shoff) + " lies outside the file");
    if (shnum == 0) {
        // Extended numbering: the count is in section 0's sh_size.
        shnum = ld64(data + shoff + 32);
        if (shnum == 0) return bad(why, "ELF: no sections");
    }
    if (shnum > (size - shoff) / kShdrSize)
        return bad(why, "ELF: section header table (" + std::to_string(shnum) + " entries at " +
                            std::to_string(shoff) + ") extends past the end of the file");

    // Find the dynamic symbol table.
    uint64_t dynsym_index = 0;
    for (uint64_t i = 1; i < shnum; ++i) {
        if (ld32(data + shoff + i * kShdrSize + 4) == SHT_DYNSYM) {
            dynsym_index = i;
            break;
        }
    }
    if (dynsym_index == 0) return bad(why, "ELF: no dynamic symbol table (.dynsym)");
    const Shdr sym = read_shdr(data + shoff + dynsym_index * kShdrSize);
    if (sym.entsize != kSymSize)
        return bad(why, "ELF: .dynsym sh_entsize is " + std::to_string(sym.entsize) + ", expected 24");
    if (sym.size % kSymSize != 0)
        return bad(why, "ELF: .dynsym size " + std::to_string(sym.size) + " is not a multiple of 24");
    if (!in_bounds(sym.offset, sym.size, size))
        return bad(why, "ELF: .dynsym [" + std::to_string(sym.offset) + ", +" + std::to_string(sym.size) +
                            ") lies outside the file");

    if (sym.link == 0 || sym.link >= shnum)
        return bad(why, "ELF: .dynsym links to section " + std::to_string(sym.link) + ", which does not exist");
    const Shdr str = read_shdr(data + shoff + uint64_t(sym.link) * kShdrSize);
    if (str.type != SHT_STRTAB)
        return bad(why, "ELF: .dynsym's string table (section " + std::to_string(sym.link) +
                            ") is not SHT_STRTAB");
    if (!in_bounds(str.offset, str.size, size))
        return bad(why, "ELF: .dynstr [" + std::to_string(str.offset) + ", +" + std::to_string(str.size) +
                            ") lies outside the file");

    const uint8_t *strtab = data + str.offset;
    ElfInfo info;
    info.machine = machine;
    const uint64_t nsyms = sym.size / kSymSize;
    info.dynsyms.reserve(nsyms > 0 ? nsyms - 1 : 0);
    for (uint64_t i = 1; i < nsyms; ++i) {  // symbol 0 is the null symbol
        const uint8_t *s = data + sym.offset + i * kSymSize;
        const uint32_t name = ld32(s);
        const uint16_t shndx = ld16(s + 6);
        if (name >= str.size)
            return bad(why, "ELF: symbol " + std::to_string(i) + " name offset " + std::to_string(name) +
                                " lies outside .dynstr");
        const void *nul = memchr(strtab + name, '\0', str.size - name);
        if (!nul) return bad(why, "ELF: symbol " + std::to_string(i) + " name is not NUL-terminated");
        const size_t len = static_cast<const uint8_t *>(nul) - (strtab + name);
        info.dynsyms.push_back(
            ElfSymbol{std::string(reinterpret_cast<const char *>(strtab + name), len), shndx != SHN_UNDEF});
    }

    if (out) *out = std::move(info);
    if (why) why->clear();
    return UCX_IFUNC_OK;
}

uint16_t elf_host_machine()
{
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#else
#error "XRDMA: unsupported host architecture (add its e_machine to elf.cc)"
#endif
}

}  // namespace xrdma
