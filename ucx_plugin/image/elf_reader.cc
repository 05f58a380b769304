// Bounds-checked ELF64 little-endian reader (see elf_reader.h).
//
// glibc's dynamic loader trusts the objects it loads: it follows the
// program headers and the dynamic section (not the section headers) and
// reads and writes wherever they point, asserts on inconsistencies, and
// walks hash chains until they end. A native part comes from another
// process, so before it is handed to dlopen() this reader checks everything
// the loader will use, the way the loader uses it: addresses are virtual
// addresses resolved through the PT_LOAD segments, each table must lie in
// the file's bytes of one segment, each relocation must write into a
// writable segment and leave the loader's own tables alone.
//
// The constants are spelled out here rather than taken from the system's
// <elf.h>, so that the reader does not depend on the host's headers.
#include "image/elf_reader.h"

#include "image/image.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <cstring>
#include <string>
#include <unistd.h>

namespace xrdma {

namespace {

// e_ident
constexpr size_t EI_CLASS = 4, EI_DATA = 5, EI_VERSION = 6;
constexpr uint8_t ELFCLASS64 = 2;
constexpr uint8_t ELFDATA2LSB = 1;
constexpr uint32_t EV_CURRENT = 1;
constexpr uint16_t ET_REL = 1, ET_EXEC = 2, ET_DYN = 3, ET_CORE = 4;
constexpr uint16_t EM_X86_64 = 62;
constexpr uint16_t EM_AARCH64 = 183;

constexpr size_t kEhdrSize = 64;
constexpr size_t kShdrSize = 64;
constexpr size_t kPhdrSize = 56;
constexpr size_t kSymSize = 24;
constexpr size_t kRelaSize = 24;
constexpr size_t kDynSize = 16;

constexpr uint32_t SHT_STRTAB = 3;
constexpr uint32_t SHT_DYNSYM = 11;
constexpr uint32_t SHT_PROGBITS = 1;
constexpr uint32_t SHT_NOBITS = 8;
constexpr uint64_t SHF_WRITE = 1;
constexpr uint64_t SHF_ALLOC = 2;
constexpr uint16_t SHN_UNDEF = 0;
constexpr uint16_t SHN_ABS = 0xfff1;

// Program header types and flags.
constexpr uint32_t PT_LOAD = 1, PT_DYNAMIC = 2, PT_PHDR = 6, PT_TLS = 7;
constexpr uint32_t PT_GNU_STACK = 0x6474e551, PT_GNU_RELRO = 0x6474e552;
constexpr uint32_t PF_X = 1, PF_W = 2;

// Dynamic tags.
enum : uint64_t {
    DT_NULL = 0, DT_NEEDED = 1, DT_PLTRELSZ = 2, DT_PLTGOT = 3, DT_HASH = 4, DT_STRTAB = 5,
    DT_SYMTAB = 6, DT_RELA = 7, DT_RELASZ = 8, DT_RELAENT = 9, DT_STRSZ = 10, DT_SYMENT = 11,
    DT_INIT = 12, DT_FINI = 13, DT_SONAME = 14, DT_RPATH = 15, DT_SYMBOLIC = 16, DT_REL = 17,
    DT_RELSZ = 18, DT_RELENT = 19, DT_PLTREL = 20, DT_DEBUG = 21, DT_TEXTREL = 22, DT_JMPREL = 23,
    DT_BIND_NOW = 24, DT_INIT_ARRAY = 25, DT_FINI_ARRAY = 26, DT_INIT_ARRAYSZ = 27,
    DT_FINI_ARRAYSZ = 28, DT_RUNPATH = 29, DT_FLAGS = 30, DT_PREINIT_ARRAY = 32,
    DT_PREINIT_ARRAYSZ = 33, DT_SYMTAB_SHNDX = 34, DT_RELRSZ = 35, DT_RELR = 36, DT_RELRENT = 37,
    DT_DEPAUDIT = 0x6ffffefb, DT_AUDIT = 0x6ffffefc, DT_GNU_HASH = 0x6ffffef5,
    DT_VERSYM = 0x6ffffff0, DT_RELACOUNT = 0x6ffffff9, DT_RELCOUNT = 0x6ffffffa,
    DT_FLAGS_1 = 0x6ffffffb, DT_VERDEF = 0x6ffffffc, DT_VERDEFNUM = 0x6ffffffd,
    DT_VERNEED = 0x6ffffffe, DT_VERNEEDNUM = 0x6fffffff, DT_AUXILIARY = 0x7ffffffd,
    DT_FILTER = 0x7fffffff,
};
// DT_FLAGS: ORIGIN, SYMBOLIC, BIND_NOW, STATIC_TLS are harmless; TEXTREL is not.
constexpr uint64_t DF_TEXTREL = 0x4, DF_ALLOWED = 0x1 | 0x2 | 0x8 | 0x10;
// DT_FLAGS_1: NOW, NODELETE, NOOPEN, ORIGIN, NODEFLIB, NODUMP and PIE (which
// glibc refuses to dlopen by itself). GLOBAL, GROUP, INITFIRST, INTERPOSE,
// LOADFLTR and the rest change how the process resolves symbols.
constexpr uint64_t DF_1_ALLOWED = 0x1 | 0x8 | 0x40 | 0x80 | 0x800 | 0x1000 | 0x08000000;

constexpr uint8_t STT_NOTYPE = 0, STT_FUNC = 2, STT_GNU_IFUNC = 10;
constexpr uint8_t STB_LOCAL = 0, STB_GNU_UNIQUE = 10;

constexpr uint64_t kMaxVaddr = uint64_t(1) << 47;  // user address space
constexpr uint64_t kMaxTlsSize = uint64_t(1) << 20;
constexpr unsigned kMaxVersionRecords = 1024;

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

std::string hex(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
    return b;
}


std::string type_name(uint16_t type)
{
    switch (type) {
    case ET_REL: return "ET_REL, a relocatable object";
    case ET_EXEC: return "ET_EXEC, an executable";
    case ET_CORE: return "ET_CORE, a core file";
    default: return "e_type " + std::to_string(type);
    }
}

std::string tag_name(uint64_t tag)
{
    switch (tag) {
    case DT_NEEDED: return "DT_NEEDED";
    case DT_PLTRELSZ: return "DT_PLTRELSZ";
    case DT_HASH: return "DT_HASH";
    case DT_STRTAB: return "DT_STRTAB";
    case DT_SYMTAB: return "DT_SYMTAB";
    case DT_RELA: return "DT_RELA";
    case DT_RELASZ: return "DT_RELASZ";
    case DT_RELAENT: return "DT_RELAENT";
    case DT_STRSZ: return "DT_STRSZ";
    case DT_SYMENT: return "DT_SYMENT";
    case DT_INIT: return "DT_INIT";
    case DT_FINI: return "DT_FINI";
    case DT_SONAME: return "DT_SONAME";
    case DT_RPATH: return "DT_RPATH";
    case DT_REL: return "DT_REL";
    case DT_RELSZ: return "DT_RELSZ";
    case DT_RELENT: return "DT_RELENT";
    case DT_PLTREL: return "DT_PLTREL";
    case DT_TEXTREL: return "DT_TEXTREL";
    case DT_JMPREL: return "DT_JMPREL";
    case DT_INIT_ARRAY: return "DT_INIT_ARRAY";
    case DT_FINI_ARRAY: return "DT_FINI_ARRAY";
    case DT_INIT_ARRAYSZ: return "DT_INIT_ARRAYSZ";
    case DT_FINI_ARRAYSZ: return "DT_FINI_ARRAYSZ";
    case DT_RUNPATH: return "DT_RUNPATH";
    case DT_FLAGS: return "DT_FLAGS";
    case DT_PREINIT_ARRAY: return "DT_PREINIT_ARRAY";
    case DT_PREINIT_ARRAYSZ: return "DT_PREINIT_ARRAYSZ";
    case DT_RELRSZ: return "DT_RELRSZ";
    case DT_RELR: return "DT_RELR";
    case DT_RELRENT: return "DT_RELRENT";
    case DT_AUDIT: return "DT_AUDIT";
    case DT_DEPAUDIT: return "DT_DEPAUDIT";
    case DT_GNU_HASH: return "DT_GNU_HASH";
    case DT_VERSYM: return "DT_VERSYM";
    case DT_RELACOUNT: return "DT_RELACOUNT";
    case DT_FLAGS_1: return "DT_FLAGS_1";
    case DT_VERDEF: return "DT_VERDEF";
    case DT_VERNEED: return "DT_VERNEED";
    case DT_AUXILIARY: return "DT_AUXILIARY";
    case DT_FILTER: return "DT_FILTER";
    default: return "dynamic tag " + hex(tag);
    }
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

struct Load {
    uint64_t offset, vaddr, filesz, memsz;
    uint32_t flags;
};

// A range of virtual addresses the loader reads while it relocates (or
// later): no relocation may write into one.
struct Span {
    uint64_t lo, hi;
    const char *what;
};

// Relocation types the loader of this machine applies: bytes written, or
// one of the special kinds.
enum RelocKind { kWrite, kNone, kIrelative, kCopy, kUnknown };

RelocKind reloc_kind(uint16_t machine, uint32_t type, unsigned *width, bool *looks_up)
{
    *width = 8;
    *looks_up = true;
    if (machine == EM_X86_64) {
        switch (type) {
        case 0: *looks_up = false; return kNone;                          // R_X86_64_NONE
        case 1: case 6: case 7: case 16: case 17: case 18: case 33: return kWrite;  // 64 GLOB_DAT JUMP_SLOT DTPMOD64 DTPOFF64 TPOFF64 SIZE64
        case 2: case 10: case 32: *width = 4; return kWrite;               // PC32 32 SIZE32
        case 8: *looks_up = false; return kWrite;                          // RELATIVE
        case 36: *width = 16; return kWrite;                               // TLSDESC
        case 37: *looks_up = false; return kIrelative;                     // IRELATIVE
        case 5: return kCopy;                                              // COPY
        default: return kUnknown;
        }
    }
    if (machine == EM_AARCH64) {
        switch (type) {
        case 0: *looks_up = false; return kNone;                           // R_AARCH64_NONE
        case 257: case 1025: case 1026: case 1028: case 1029: case 1030: return kWrite;  // ABS64 GLOB_DAT JUMP_SLOT TLS_DTPMOD TLS_DTPREL TLS_TPREL
        case 1027: *looks_up = false; return kWrite;                       // RELATIVE
        case 1031: *width = 16; return kWrite;                             // TLSDESC
        case 1032: *looks_up = false; return kIrelative;                   // IRELATIVE
        case 1024: return kCopy;                                           // COPY
        default: return kUnknown;
        }
    }
    return kUnknown;
}

class Reader {
public:
    Reader(const uint8_t *data, size_t size, std::string *why) : d_(data), size_(size), why_(why) {}
    ucx_ifunc_status_t run(ElfInfo *info);

private:
    ucx_ifunc_status_t sections();
    ucx_ifunc_status_t program_headers();
    ucx_ifunc_status_t dynamic();
    ucx_ifunc_status_t hash_tables();
    ucx_ifunc_status_t symbols();
    ucx_ifunc_status_t versions();
    ucx_ifunc_status_t relocation_tables();
    ucx_ifunc_status_t relocations();
    ucx_ifunc_status_t write_ok(uint64_t vaddr, uint64_t len, const std::string &what);
    void merge_spans();  // call once all tables are located

    // File offset of [vaddr, vaddr+len) if it lies in the file bytes of one
    // segment (or just in its memory, with @p memory).
    const Load *segment_of(uint64_t vaddr, uint64_t len, bool memory = false) const
    {
        for (const Load &l : loads_) {
            const uint64_t lim = memory ? l.memsz : l.filesz;
            if (vaddr >= l.vaddr && vaddr - l.vaddr <= lim && len <= lim - (vaddr - l.vaddr)) return &l;
        }
        return nullptr;
    }
    // Bytes of a table at [vaddr, vaddr+len), or nullptr (why_ set).
    const uint8_t *table(uint64_t vaddr, uint64_t len, const std::string &what)
    {
        const Load *l = segment_of(vaddr, len);
        if (!l) {
            bad(why_, "ELF: " + what + " [" + hex(vaddr) + ", +" + std::to_string(len) +
                          ") does not lie in the file bytes of a loaded segment");
            return nullptr;
        }
        spans_.push_back(Span{vaddr, vaddr + len, nullptr});
        span_names_.push_back(what);
        return d_ + l->offset + (vaddr - l->vaddr);
    }
    // The NUL-terminated string at @p off of the dynamic string table.
    bool string_at(uint64_t off, std::string *out) const
    {
        if (off >= strsz_) return false;
        const void *nul = memchr(strtab_ + off, '\0', strsz_ - off);
        if (!nul) return false;
        out->assign(reinterpret_cast<const char *>(strtab_ + off), static_cast<const uint8_t *>(nul) - (strtab_ + off));
        return true;
    }
    bool has(uint64_t tag) const { return std::find(tags_.begin(), tags_.end(), tag) != tags_.end(); }
    uint64_t val(uint64_t tag) const
    {
        for (size_t i = 0; i < tags_.size(); ++i)
            if (tags_[i] == tag) return vals_[i];
        return 0;
    }

    const uint8_t *d_;
    size_t size_;
    std::string *why_;
    ElfInfo info_;
    uint16_t machine_ = 0;
    uint64_t phoff_ = 0, phnum_ = 0, page_ = 4096;
    std::vector<Load> loads_;
    uint64_t dyn_vaddr_ = 0, dyn_size_ = 0;
    bool dyn_writable_ = false;
    std::vector<uint64_t> tags_, vals_;  // dynamic entries (each known tag once)
    std::vector<uint64_t> needed_offs_;
    const uint8_t *strtab_ = nullptr;
    uint64_t strsz_ = 0;
    const uint8_t *symtab_ = nullptr;
    uint64_t nsyms_ = 0;
    const uint8_t *versym_ = nullptr;
    unsigned ndx_high_ = 0;
    struct RelTable {
        const uint8_t *p = nullptr;
        uint64_t n = 0;
        const char *what;
    } rela_{nullptr, 0, "DT_RELA"}, jmprel_{nullptr, 0, "DT_JMPREL"};
    uint64_t nrelative_ = 0, nrelr_ = 0;
    const uint8_t *relr_ = nullptr;
    std::vector<Span> spans_;
    std::vector<std::string> span_names_;
};

ucx_ifunc_status_t Reader::run(ElfInfo *out)
{
    const uint8_t *data = d_;
    const size_t size = size_;
    if (!data || size < kEhdrSize)
        return bad(why_, "ELF: " + std::to_string(size) + " bytes, shorter than an ELF64 header");
    if (memcmp(data, "\x7f" "ELF", 4) != 0) return bad(why_, "not an ELF file (bad magic)");
    if (data[EI_CLASS] != ELFCLASS64) return bad(why_, "ELF: not a 64-bit object (ELFCLASS64 expected)");
    if (data[EI_DATA] != ELFDATA2LSB) return bad(why_, "ELF: not little-endian (ELFDATA2LSB expected)");
    if (data[EI_VERSION] != EV_CURRENT || ld32(data + 20) != EV_CURRENT)
        return bad(why_, "ELF: unknown ELF version (EV_CURRENT expected)");

    const uint16_t type = ld16(data + 16);
    if (type != ET_DYN) return bad(why_, "ELF: not a shared object (" + type_name(type) + ")");
    machine_ = ld16(data + 18);
    info_.machine = machine_;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg > 4096) page_ = uint64_t(pg);

    ucx_ifunc_status_t st;
    if ((st = sections()) != UCX_IFUNC_OK) return st;
    if ((st = program_headers()) != UCX_IFUNC_OK) return st;
    if ((st = dynamic()) != UCX_IFUNC_OK) return st;
    if ((st = hash_tables()) != UCX_IFUNC_OK) return st;
    if ((st = relocation_tables()) != UCX_IFUNC_OK) return st;
    if ((st = symbols()) != UCX_IFUNC_OK) return st;
    if ((st = versions()) != UCX_IFUNC_OK) return st;
    if ((st = relocations()) != UCX_IFUNC_OK) return st;
    if (out) *out = std::move(info_);
    if (why_) why_->clear();
    return UCX_IFUNC_OK;
}

// The section headers, .dynsym and .dynstr: not what the loader uses, but
// what tools (and xrdma-cc) read; they must be sound too.
ucx_ifunc_status_t Reader::sections()
{
    const uint8_t *data = d_;
    const size_t size = size_;
    const uint64_t shoff = ld64(data + 40);
    const uint16_t shentsize = ld16(data + 58);
    uint64_t shnum = ld16(data + 60);
    if (shoff == 0) return bad(why_, "ELF: no section header table");
    if (shentsize != kShdrSize)
        return bad(why_, "ELF: e_shentsize is " + std::to_string(shentsize) + ", expected 64");
    if (!in_bounds(shoff, kShdrSize, size))
        return bad(why_, "ELF: section header table at " + std::to_string(shoff) + " lies outside the file");
    if (shnum == 0) {
        // Extended numbering: the count is in section 0's sh_size.
        shnum = ld64(data + shoff + 32);
        if (shnum == 0) return bad(why_, "ELF: no sections");
    }
    if (shnum > (size - shoff) / kShdrSize)
        return bad(why_, "ELF: section header table (" + std::to_string(shnum) + " entries at " +
                             std::to_string(shoff) + ") extends past the end of the file");

    // The object's own writable data (by section: names and sizes only
    // decide where its code may run, never how it is loaded).
    const uint64_t shstrndx = ld16(data + 62);
    const Shdr names = shstrndx && shstrndx < shnum ? read_shdr(data + shoff + shstrndx * kShdrSize) : Shdr{};
    const bool names_ok = names.type == SHT_STRTAB && in_bounds(names.offset, names.size, size);
    for (uint64_t i = 1; i < shnum; ++i) {
        const uint8_t *sh = data + shoff + i * kShdrSize;
        const Shdr s = read_shdr(sh);
        const uint64_t flags = ld64(sh + 8);
        if ((flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE) || s.size == 0) continue;
        if (s.type != SHT_PROGBITS && s.type != SHT_NOBITS) continue;  // dynamic, init/fini arrays
        std::string name = "section " + std::to_string(i);
        const uint32_t n = ld32(sh);
        if (names_ok && n < names.size && memchr(data + names.offset + n, '\0', names.size - n))
            name = printable(reinterpret_cast<const char *>(data + names.offset + n), 64);
        if (name == ".got" || name == ".got.plt" || name.rfind(".data.rel.ro", 0) == 0) continue;
        info_.writable_data.push_back(name + " (" + std::to_string(s.size) + " bytes)");
    }

    uint64_t dynsym_index = 0;
    for (uint64_t i = 1; i < shnum; ++i) {
        if (ld32(data + shoff + i * kShdrSize + 4) == SHT_DYNSYM) {
            dynsym_index = i;
            break;
        }
    }
    if (dynsym_index == 0) return bad(why_, "ELF: no dynamic symbol table (.dynsym)");
    const Shdr sym = read_shdr(data + shoff + dynsym_index * kShdrSize);
    if (sym.entsize != kSymSize)
        return bad(why_, "ELF: .dynsym sh_entsize is " + std::to_string(sym.entsize) + ", expected 24");
    if (sym.size % kSymSize != 0)
        return bad(why_, "ELF: .dynsym size " + std::to_string(sym.size) + " is not a multiple of 24");
    if (!in_bounds(sym.offset, sym.size, size))
        return bad(why_, "ELF: .dynsym [" + std::to_string(sym.offset) + ", +" + std::to_string(sym.size) +
                             ") lies outside the file");
    if (sym.link == 0 || sym.link >= shnum)
        return bad(why_, "ELF: .dynsym links to section " + std::to_string(sym.link) + ", which does not exist");
    const Shdr str = read_shdr(data + shoff + uint64_t(sym.link) * kShdrSize);
    if (str.type != SHT_STRTAB)
        return bad(why_, "ELF: .dynsym's string table (section " + std::to_string(sym.link) +
                             ") is not SHT_STRTAB");
    if (!in_bounds(str.offset, str.size, size))
        return bad(why_, "ELF: .dynstr [" + std::to_string(str.offset) + ", +" + std::to_string(str.size) +
                             ") lies outside the file");
    const uint8_t *strtab = data + str.offset;
    const uint64_t nsyms = sym.size / kSymSize;
    for (uint64_t i = 1; i < nsyms; ++i) {
        const uint32_t name = ld32(data + sym.offset + i * kSymSize);
        if (name >= str.size)
            return bad(why_, "ELF: symbol " + std::to_string(i) + " name offset " + std::to_string(name) +
                                 " lies outside .dynstr");
        if (!memchr(strtab + name, '\0', str.size - name))
            return bad(why_, "ELF: symbol " + std::to_string(i) + " name is not NUL-terminated");
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t Reader::program_headers()
{
    phoff_ = ld64(d_ + 32);
    const uint16_t phentsize = ld16(d_ + 54);
    phnum_ = ld16(d_ + 56);
    if (phnum_ == 0) return bad(why_, "ELF: no program headers");
    if (phnum_ == 0xffff) return bad(why_, "ELF: extended program header numbering (PN_XNUM) is not supported");
    if (phentsize != kPhdrSize)
        return bad(why_, "ELF: e_phentsize is " + std::to_string(phentsize) + ", expected 56");
    if (!in_bounds(phoff_, phnum_ * kPhdrSize, size_))
        return bad(why_, "ELF: program headers (" + std::to_string(phnum_) + " at " + std::to_string(phoff_) +
                             ") extend past the end of the file");

    // PT_LOAD segments first: everything else is located through them.
    for (uint64_t i = 0; i < phnum_; ++i) {
        const uint8_t *p = d_ + phoff_ + i * kPhdrSize;
        if (ld32(p) != PT_LOAD) continue;
        Load l{ld64(p + 8), ld64(p + 16), ld64(p + 32), ld64(p + 40), ld32(p + 4)};
        const std::string seg = "PT_LOAD segment " + std::to_string(loads_.size());
        if (l.filesz > l.memsz)
            return bad(why_, "ELF: " + seg + " has more file bytes than memory (" + std::to_string(l.filesz) +
                                 " > " + std::to_string(l.memsz) + ")");
        if (!in_bounds(l.offset, l.filesz, size_))
            return bad(why_, "ELF: " + seg + " [" + std::to_string(l.offset) + ", +" + std::to_string(l.filesz) +
                                 ") extends past the end of the file");
        if (l.vaddr >= kMaxVaddr || l.memsz > kMaxVaddr - l.vaddr)
            return bad(why_, "ELF: " + seg + " at " + hex(l.vaddr) + " (+" + std::to_string(l.memsz) +
                                 ") lies outside the address space");
        if (l.memsz == 0) continue;
        // The loader maps whole pages, later segments over earlier ones: two
        // segments sharing a page would show one's bytes in the other.
        if (!loads_.empty()) {
            const Load &prev = loads_.back();
            const uint64_t prev_end = (prev.vaddr + prev.memsz + page_ - 1) / page_ * page_;
            if (l.vaddr / page_ * page_ < prev_end)
                return bad(why_, "ELF: " + seg + " at " + hex(l.vaddr) +
                                     " is not above the previous one's pages (segments overlap or are unsorted)");
        }
        loads_.push_back(l);
    }
    if (loads_.empty()) return bad(why_, "ELF: no loadable segment (PT_LOAD)");

    unsigned ndyn = 0;
    for (uint64_t i = 0; i < phnum_; ++i) {
        const uint8_t *p = d_ + phoff_ + i * kPhdrSize;
        const uint32_t type = ld32(p), flags = ld32(p + 4);
        const uint64_t offset = ld64(p + 8), vaddr = ld64(p + 16), filesz = ld64(p + 32), memsz = ld64(p + 40),
                       align = ld64(p + 48);
        const std::string ph = "program header " + std::to_string(i);
        switch (type) {
        case PT_LOAD:
            break;
        case PT_DYNAMIC:
            if (++ndyn > 1) return bad(why_, "ELF: more than one dynamic segment (PT_DYNAMIC)");
            dyn_vaddr_ = vaddr;
            dyn_size_ = filesz;
            dyn_writable_ = flags & PF_W;
            break;
        case PT_GNU_STACK:
            // glibc would make the stacks of every thread of the process executable.
            if (flags & PF_X) return bad(why_, "ELF: asks for an executable stack (PT_GNU_STACK with PF_X)");
            break;
        case PT_GNU_RELRO: {
            // The loader makes [page_down(vaddr), page_down(vaddr + memsz))
            // read-only after relocation (lld rounds memsz up to the page):
            // those pages must be one segment's, not other mappings.
            if (memsz == 0) break;
            const uint64_t lo = vaddr / page_ * page_, hi = (vaddr + memsz) / page_ * page_;
            bool inside = vaddr < kMaxVaddr && memsz <= kMaxVaddr;
            if (inside) {
                inside = false;
                for (const Load &l : loads_)
                    if (lo >= l.vaddr / page_ * page_ && hi <= (l.vaddr + l.memsz + page_ - 1) / page_ * page_)
                        inside = true;
            }
            if (!inside)
                return bad(why_, "ELF: read-only-after-relocation range (PT_GNU_RELRO) [" + hex(vaddr) + ", +" +
                                     std::to_string(memsz) + ") reaches beyond the pages of its segment");
            break;
        }
        case PT_PHDR:
            // dl_iterate_phdr() (and the unwinder) read the headers there.
            if (offset != phoff_ || filesz < phnum_ * kPhdrSize || !segment_of(vaddr, phnum_ * kPhdrSize))
                return bad(why_, "ELF: PT_PHDR does not describe the program headers in a loaded segment");
            {
                const Load *l = segment_of(vaddr, phnum_ * kPhdrSize);
                if (l->offset + (vaddr - l->vaddr) != phoff_)
                    return bad(why_, "ELF: PT_PHDR maps to other bytes than the program headers");
            }
            spans_.push_back(Span{vaddr, vaddr + phnum_ * kPhdrSize, nullptr});
            span_names_.push_back("program headers");
            break;
        case PT_TLS:
            if (memsz == 0) break;
            if (filesz > memsz || memsz > kMaxTlsSize || (align & (align - 1)) != 0 || align > 65536)
                return bad(why_, "ELF: thread-local storage segment (PT_TLS) of " + std::to_string(memsz) +
                                     " bytes, aligned to " + std::to_string(align) + ", is not sane");
            if (!segment_of(vaddr, filesz))
                return bad(why_, "ELF: thread-local storage image (PT_TLS) lies outside a loaded segment");
            break;
        default:
            // Notes, properties, unwind tables, ...: read in memory by the
            // loader or the unwinder, so they must lie in a segment.
            if (memsz && !segment_of(vaddr, memsz, true))
                return bad(why_, "ELF: " + ph + " (type " + hex(type) + ") [" + hex(vaddr) + ", +" +
                                     std::to_string(memsz) + ") lies outside a loaded segment");
            break;
        }
    }
    if (ndyn == 0) return bad(why_, "ELF: no dynamic segment (PT_DYNAMIC)");
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t Reader::dynamic()
{
    const uint8_t *dyn = table(dyn_vaddr_, dyn_size_, "dynamic section");
    if (!dyn) return UCX_IFUNC_ERR_BAD_CODE;
    // A dynamic segment marked writable is adjusted in place by the loader.
    if (dyn_writable_ && !(segment_of(dyn_vaddr_, dyn_size_)->flags & PF_W))
        return bad(why_, "ELF: the dynamic section is marked writable but lies in a read-only segment");
    bool ended = false;
    for (uint64_t i = 0; i + kDynSize <= dyn_size_; i += kDynSize) {
        const uint64_t tag = ld64(dyn + i), v = ld64(dyn + i + 8);
        if (tag == DT_NULL) {
            ended = true;
            break;
        }
        switch (tag) {
        case DT_NEEDED:
            needed_offs_.push_back(v);
            continue;
        case DT_RPATH: case DT_RUNPATH:
            // Toolchains add one for -Wl,-rpath. Accepted but never used: the
            // loader drops it from the copy it loads (start_files_strip()).
            continue;
        case DT_REL: case DT_RELSZ: case DT_RELENT: case DT_RELCOUNT:
            return bad(why_, "ELF: has REL relocations (" + tag_name(tag) + "), which this machine does not use");
        case DT_TEXTREL:
            return bad(why_, "ELF: has text relocations (DT_TEXTREL): its code would be writable while it loads");
        case DT_FILTER: case DT_AUXILIARY:
            return bad(why_, "ELF: is a filter (" + tag_name(tag) + "): it would redirect symbols to another library");
        case DT_AUDIT: case DT_DEPAUDIT:
            return bad(why_, "ELF: names an audit library (" + tag_name(tag) + ")");
        case DT_FLAGS:
            if (v & DF_TEXTREL) return bad(why_, "ELF: has text relocations (DF_TEXTREL)");
            if (v & ~DF_ALLOWED) return bad(why_, "ELF: DT_FLAGS " + hex(v) + " has flags a target does not allow");
            break;
        case DT_FLAGS_1:
            if (v & ~DF_1_ALLOWED)
                return bad(why_, "ELF: DT_FLAGS_1 " + hex(v) + " has flags that change symbol resolution (" +
                                     hex(v & ~DF_1_ALLOWED) + ")");
            break;
        case DT_PLTRELSZ: case DT_HASH: case DT_STRTAB: case DT_SYMTAB: case DT_RELA: case DT_RELASZ:
        case DT_RELAENT: case DT_STRSZ: case DT_SYMENT: case DT_INIT: case DT_FINI: case DT_SONAME:
        case DT_PLTREL: case DT_JMPREL: case DT_INIT_ARRAY: case DT_FINI_ARRAY: case DT_INIT_ARRAYSZ:
        case DT_FINI_ARRAYSZ: case DT_PREINIT_ARRAY: case DT_PREINIT_ARRAYSZ: case DT_RELRSZ: case DT_RELR:
        case DT_RELRENT: case DT_GNU_HASH: case DT_VERSYM: case DT_RELACOUNT: case DT_VERDEF:
        case DT_VERDEFNUM: case DT_VERNEED: case DT_VERNEEDNUM:
            break;
        default:
            continue;  // the loader ignores other tags (DT_DEBUG, DT_PLTGOT with immediate binding, ...)
        }
        // The loader keeps the last of several: one is all a reader can trust.
        if (has(tag)) return bad(why_, "ELF: " + tag_name(tag) + " appears twice in the dynamic section");
        tags_.push_back(tag);
        vals_.push_back(v);
    }
    if (!ended) return bad(why_, "ELF: the dynamic section has no DT_NULL end within its segment");

    // Consistency the loader asserts (or dereferences without checking).
    if (has(DT_RELA) && (!has(DT_RELASZ) || val(DT_RELAENT) != kRelaSize))
        return bad(why_, "ELF: DT_RELA without DT_RELASZ or with DT_RELAENT other than 24");
    if (has(DT_JMPREL) && (!has(DT_PLTRELSZ) || !has(DT_PLTREL)))
        return bad(why_, "ELF: DT_JMPREL without DT_PLTRELSZ or DT_PLTREL");
    if (has(DT_PLTREL) && val(DT_PLTREL) != DT_RELA)
        return bad(why_, "ELF: DT_PLTREL is " + std::to_string(val(DT_PLTREL)) + ", not DT_RELA");
    if (has(DT_RELR) && (!has(DT_RELRSZ) || val(DT_RELRENT) != 8))
        return bad(why_, "ELF: DT_RELR without DT_RELRSZ or with DT_RELRENT other than 8");
    if (!has(DT_STRTAB) || !has(DT_STRSZ) || !has(DT_SYMTAB))
        return bad(why_, "ELF: the dynamic section lacks DT_STRTAB, DT_STRSZ or DT_SYMTAB");
    if (has(DT_SYMENT) && val(DT_SYMENT) != kSymSize)
        return bad(why_, "ELF: DT_SYMENT is " + std::to_string(val(DT_SYMENT)) + ", expected 24");

    // Code that would run at load or unload: the object's constructors and
    // destructors (glibc runs DT_INIT, then DT_INIT_ARRAY; DT_FINI_ARRAY and
    // DT_FINI at dlclose() or exit, outside any containment).
    auto array = [&](uint64_t tag, uint64_t sztag) {
        if (!has(tag)) return;
        if (!has(sztag)) {
            info_.load_code.push_back(tag_name(tag) + " (without " + tag_name(sztag) + ")");
        } else if (val(sztag) != 0) {
            const uint64_t n = val(sztag) / 8;
            info_.load_code.push_back(tag_name(tag) + " (" + std::to_string(n) + (n == 1 ? " entry)" : " entries)"));
        }
    };
    if (has(DT_PREINIT_ARRAY)) info_.load_code.push_back("DT_PREINIT_ARRAY");
    if (has(DT_INIT)) info_.load_code.push_back("DT_INIT");
    array(DT_INIT_ARRAY, DT_INIT_ARRAYSZ);
    array(DT_FINI_ARRAY, DT_FINI_ARRAYSZ);
    if (has(DT_FINI)) info_.load_code.push_back("DT_FINI");

    strsz_ = val(DT_STRSZ);
    strtab_ = table(val(DT_STRTAB), strsz_, "dynamic string table (DT_STRTAB)");
    if (!strtab_) return UCX_IFUNC_ERR_BAD_CODE;
    for (uint64_t off : needed_offs_) {
        std::string name;
        if (!string_at(off, &name)) return bad(why_, "ELF: a DT_NEEDED name lies outside the string table");
        if (name.empty()) return bad(why_, "ELF: an empty DT_NEEDED name");
        if (name.find('/') != std::string::npos)
            return bad(why_, "ELF: DT_NEEDED \"" + printable(name, 64) +
                                 "\" is a path: injected code may not choose which file the target loads");
        info_.needed.push_back(name);
    }
    std::string soname;
    if (has(DT_SONAME) && !string_at(val(DT_SONAME), &soname))
        return bad(why_, "ELF: DT_SONAME lies outside the string table");
    return UCX_IFUNC_OK;
}

// The symbol count is nowhere in the dynamic section: it follows from the
// hash tables (the loader looks names up through them, and a relocation's
// symbol index must stay below it).
ucx_ifunc_status_t Reader::hash_tables()
{
    if (!has(DT_HASH) && !has(DT_GNU_HASH)) return bad(why_, "ELF: no symbol hash table (DT_HASH or DT_GNU_HASH)");
    if (has(DT_HASH)) {
        const uint8_t *h = table(val(DT_HASH), 8, "DT_HASH header");
        if (!h) return UCX_IFUNC_ERR_BAD_CODE;
        const uint64_t nbucket = ld32(h), nchain = ld32(h + 4);
        if (nbucket == 0) return bad(why_, "ELF: DT_HASH has no buckets");
        h = table(val(DT_HASH), 8 + 4 * (nbucket + nchain), "DT_HASH table");
        if (!h) return UCX_IFUNC_ERR_BAD_CODE;
        const uint8_t *bucket = h + 8, *chain = h + 8 + 4 * nbucket;
        // Every chain must end: a cycle would make each lookup loop forever.
        std::vector<uint8_t> state(nchain, 0);  // 0 new, 1 on this walk, 2 ends
        std::vector<uint32_t> walk;
        for (uint64_t b = 0; b < nbucket; ++b) {
            uint32_t i = ld32(bucket + 4 * b);
            walk.clear();
            while (i != 0) {
                if (i >= nchain)
                    return bad(why_, "ELF: DT_HASH refers to symbol " + std::to_string(i) + " of " +
                                         std::to_string(nchain));
                if (state[i] == 2) break;
                if (state[i] == 1) return bad(why_, "ELF: a DT_HASH chain loops");
                state[i] = 1;
                walk.push_back(i);
                i = ld32(chain + 4 * uint64_t(i));
            }
            for (uint32_t w : walk) state[w] = 2;
        }
        nsyms_ = std::max(nsyms_, nchain);
    }
    if (has(DT_GNU_HASH)) {
        const uint64_t base = val(DT_GNU_HASH);
        const uint8_t *h = table(base, 16, "DT_GNU_HASH header");
        if (!h) return UCX_IFUNC_ERR_BAD_CODE;
        const uint64_t nbuckets = ld32(h), symoffset = ld32(h + 4), bloom = ld32(h + 8), shift = ld32(h + 12);
        // glibc asserts a power-of-two bloom filter.
        if (nbuckets == 0 || bloom == 0 || (bloom & (bloom - 1)) != 0 || shift >= 64)
            return bad(why_, "ELF: DT_GNU_HASH header is malformed (" + std::to_string(nbuckets) + " buckets, bloom " +
                                 std::to_string(bloom) + " words, shift " + std::to_string(shift) + ")");
        const uint64_t buckets_at = base + 16 + 8 * bloom;
        const uint8_t *buckets = table(buckets_at, 4 * nbuckets, "DT_GNU_HASH buckets");
        if (!buckets) return UCX_IFUNC_ERR_BAD_CODE;
        const uint64_t chains_at = buckets_at + 4 * nbuckets;
        std::vector<uint64_t> starts;
        for (uint64_t b = 0; b < nbuckets; ++b) {
            const uint64_t s = ld32(buckets + 4 * b);
            if (s == 0) continue;
            if (s < symoffset)
                return bad(why_, "ELF: DT_GNU_HASH bucket starts at symbol " + std::to_string(s) +
                                     ", below the first hashed symbol " + std::to_string(symoffset));
            starts.push_back(s);
        }
        std::sort(starts.begin(), starts.end());
        // A chain runs up to the first word with bit 0 set. Walks from sorted
        // starts inside an earlier walk end where it ended.
        uint64_t end = 0, top = symoffset;
        bool any = false;
        for (uint64_t s : starts) {
            if (any && s <= end) continue;
            const Load *l = segment_of(chains_at + 4 * (s - symoffset), 4);
            if (!l) return bad(why_, "ELF: a DT_GNU_HASH chain lies outside the loaded segments");
            uint64_t i = s;
            for (;;) {
                const uint64_t at = chains_at + 4 * (i - symoffset);
                if (!(at >= l->vaddr && at - l->vaddr + 4 <= l->filesz))
                    return bad(why_, "ELF: a DT_GNU_HASH chain runs past the end of its segment");
                if (ld32(d_ + l->offset + (at - l->vaddr)) & 1) break;
                ++i;
            }
            end = i;
            any = true;
            top = std::max(top, i + 1);
        }
        spans_.push_back(Span{chains_at, chains_at + 4 * (top - symoffset), nullptr});
        span_names_.push_back("DT_GNU_HASH chains");
        nsyms_ = std::max(nsyms_, top);
    }
    return UCX_IFUNC_OK;
}

// The relocation tables, and with them the symbol table: the loader reads
// the symbol (and version) of each relocation by index, so the table must
// reach the highest index any relocation uses, whatever the hash tables say.
ucx_ifunc_status_t Reader::relocation_tables()
{
    if (has(DT_RELA)) {
        if (val(DT_RELASZ) % kRelaSize) return bad(why_, "ELF: DT_RELASZ is not a multiple of 24");
        rela_.n = val(DT_RELASZ) / kRelaSize;
        if (!(rela_.p = table(val(DT_RELA), val(DT_RELASZ), "relocation table (DT_RELA)"))) return UCX_IFUNC_ERR_BAD_CODE;
    }
    if (has(DT_JMPREL)) {
        if (val(DT_PLTRELSZ) % kRelaSize) return bad(why_, "ELF: DT_PLTRELSZ is not a multiple of 24");
        jmprel_.n = val(DT_PLTRELSZ) / kRelaSize;
        if (!(jmprel_.p = table(val(DT_JMPREL), val(DT_PLTRELSZ), "PLT relocation table (DT_JMPREL)")))
            return UCX_IFUNC_ERR_BAD_CODE;
    }
    if (has(DT_RELR)) {
        if (val(DT_RELRSZ) % 8) return bad(why_, "ELF: DT_RELRSZ is not a multiple of 8");
        nrelr_ = val(DT_RELRSZ) / 8;
        if (!(relr_ = table(val(DT_RELR), val(DT_RELRSZ), "relative relocation table (DT_RELR)")))
            return UCX_IFUNC_ERR_BAD_CODE;
    }
    // The first DT_RELACOUNT entries are applied as relative relocations,
    // whatever their type and symbol say.
    nrelative_ = std::min(val(DT_RELACOUNT), rela_.n);
    uint64_t top = nsyms_;
    for (int ti = 0; ti < 2; ++ti) {
        const RelTable &t = ti == 0 ? rela_ : jmprel_;
        for (uint64_t i = ti == 0 ? nrelative_ : 0; i < t.n; ++i)
            top = std::max<uint64_t>(top, (ld64(t.p + i * kRelaSize + 8) >> 32) + 1);
    }
    nsyms_ = top;
    if (nsyms_ > size_ / kSymSize)
        return bad(why_, "ELF: the hash tables and relocations use " + std::to_string(nsyms_) +
                             " symbols, more than fit the file");
    symtab_ = table(val(DT_SYMTAB), nsyms_ * kSymSize, "dynamic symbol table (DT_SYMTAB)");
    return symtab_ ? UCX_IFUNC_OK : UCX_IFUNC_ERR_BAD_CODE;
}

ucx_ifunc_status_t Reader::symbols()
{
    info_.dynsyms.reserve(nsyms_ > 0 ? nsyms_ - 1 : 0);
    for (uint64_t i = 1; i < nsyms_; ++i) {  // symbol 0 is the null symbol
        const uint8_t *s = symtab_ + i * kSymSize;
        ElfSymbol sym;
        if (!string_at(ld32(s), &sym.name))
            return bad(why_, "ELF: symbol " + std::to_string(i) + " name lies outside the dynamic string table");
        const uint8_t st_info = s[4], st_other = s[5];
        const uint16_t shndx = ld16(s + 6);
        const uint64_t value = ld64(s + 8);
        sym.defined = shndx != SHN_UNDEF;
        sym.type = st_info & 0xf;
        sym.bind = st_info >> 4;
        sym.visibility = st_other & 3;
        if (sym.defined && sym.bind == STB_GNU_UNIQUE)
            return bad(why_, "ELF: unique symbol '" + printable(sym.name, 64) +
                                 "' (STB_GNU_UNIQUE) would be shared with every library of the process");
        if (sym.defined && sym.type == STT_GNU_IFUNC)
            info_.load_code.push_back("IFUNC symbol '" + printable(sym.name, 64) + "' (its resolver runs when it is bound)");
        if (sym.defined && shndx != SHN_ABS && (sym.type == STT_FUNC || sym.type == STT_NOTYPE)) {
            const Load *l = segment_of(value, 1);
            sym.in_code = l && (l->flags & PF_X);
        }
        info_.dynsyms.push_back(std::move(sym));
    }
    return UCX_IFUNC_OK;
}

// Symbol versions: the loader sizes its version array by the highest index
// that DT_VERNEED and DT_VERDEF name, then indexes it with DT_VERSYM.
ucx_ifunc_status_t Reader::versions()
{
    unsigned records = 0;
    if (has(DT_VERNEED)) {
        uint64_t at = val(DT_VERNEED);
        for (;;) {
            const uint8_t *vn = table(at, 16, "version need record (DT_VERNEED)");
            if (!vn) return UCX_IFUNC_ERR_BAD_CODE;
            if (++records > kMaxVersionRecords) return bad(why_, "ELF: too many version records");
            if (ld16(vn) != 1) return bad(why_, "ELF: version need record of version " + std::to_string(ld16(vn)));
            std::string file;
            if (!string_at(ld32(vn + 4), &file))
                return bad(why_, "ELF: a version need record's file name lies outside the string table");
            // glibc asserts the file is one the object depends on.
            if (std::find(info_.needed.begin(), info_.needed.end(), file) == info_.needed.end())
                return bad(why_, "ELF: versions needed from \"" + printable(file, 64) + "\", which is not a DT_NEEDED library");
            uint64_t aux = at + ld32(vn + 8);
            for (;;) {
                const uint8_t *a = table(aux, 16, "version need entry");
                if (!a) return UCX_IFUNC_ERR_BAD_CODE;
                if (++records > kMaxVersionRecords) return bad(why_, "ELF: too many version records");
                std::string name;
                if (!string_at(ld32(a + 8), &name))
                    return bad(why_, "ELF: a needed version's name lies outside the string table");
                ndx_high_ = std::max<unsigned>(ndx_high_, ld16(a + 6) & 0x7fff);
                if (ld32(a + 12) == 0) break;
                aux += ld32(a + 12);
            }
            if (ld32(vn + 12) == 0) break;
            at += ld32(vn + 12);
        }
    }
    if (has(DT_VERDEF)) {
        uint64_t at = val(DT_VERDEF);
        for (;;) {
            const uint8_t *vd = table(at, 20, "version definition (DT_VERDEF)");
            if (!vd) return UCX_IFUNC_ERR_BAD_CODE;
            if (++records > kMaxVersionRecords) return bad(why_, "ELF: too many version records");
            if (ld16(vd) != 1) return bad(why_, "ELF: version definition of version " + std::to_string(ld16(vd)));
            ndx_high_ = std::max<unsigned>(ndx_high_, ld16(vd + 4) & 0x7fff);
            const uint8_t *aux = table(at + ld32(vd + 12), 8, "version definition name");
            if (!aux) return UCX_IFUNC_ERR_BAD_CODE;
            std::string name;
            if (!string_at(ld32(aux), &name))
                return bad(why_, "ELF: a defined version's name lies outside the string table");
            if (ld32(vd + 16) == 0) break;
            at += ld32(vd + 16);
        }
    }
    const bool records_present = has(DT_VERNEED) || has(DT_VERDEF);
    if (records_present && ndx_high_ > 0 && !has(DT_VERSYM))
        return bad(why_, "ELF: version records without a version table (DT_VERSYM)");
    if (has(DT_VERSYM)) {
        if (ndx_high_ == 0) return bad(why_, "ELF: a version table (DT_VERSYM) without version records");
        versym_ = table(val(DT_VERSYM), 2 * nsyms_, "version table (DT_VERSYM)");
        if (!versym_) return UCX_IFUNC_ERR_BAD_CODE;
        for (uint64_t i = 0; i < nsyms_; ++i)
            if ((ld16(versym_ + 2 * i) & 0x7fff) > ndx_high_)
                return bad(why_, "ELF: symbol " + std::to_string(i) + " has version index " +
                                     std::to_string(ld16(versym_ + 2 * i) & 0x7fff) + ", above the highest (" +
                                     std::to_string(ndx_high_) + ")");
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t Reader::write_ok(uint64_t vaddr, uint64_t len, const std::string &what)
{
    const Load *l = segment_of(vaddr, len, true);
    if (!l || !(l->flags & PF_W))
        return bad(why_, "ELF: " + what + " writes to " + hex(vaddr) + ", outside the writable segments");
    // spans_ is sorted and merged: the one that could overlap starts last at or before vaddr + len.
    auto it = std::upper_bound(spans_.begin(), spans_.end(), vaddr + len - 1,
                               [](uint64_t v, const Span &s) { return v < s.lo; });
    if (it != spans_.begin() && vaddr < std::prev(it)->hi)
        return bad(why_, "ELF: " + what + " writes to " + hex(vaddr) + ", into the " + std::prev(it)->what +
                             ", which the loader reads");
    return UCX_IFUNC_OK;
}

void Reader::merge_spans()
{
    for (size_t i = 0; i < spans_.size(); ++i) spans_[i].what = span_names_[i].c_str();
    std::sort(spans_.begin(), spans_.end(), [](const Span &a, const Span &b) { return a.lo < b.lo; });
    std::vector<Span> merged;
    for (const Span &s : spans_) {
        if (s.hi <= s.lo) continue;
        if (!merged.empty() && s.lo <= merged.back().hi)
            merged.back().hi = std::max(merged.back().hi, s.hi);
        else
            merged.push_back(s);
    }
    spans_ = std::move(merged);
}

ucx_ifunc_status_t Reader::relocations()
{
    // Every table is located by now: no relocation may write into one.
    // Relocation types are the machine's: code for another machine is not
    // loaded here anyway (the caller compares e_machine and says so).
    if (machine_ != elf_host_machine()) return UCX_IFUNC_OK;
    merge_spans();

    bool irelative = false;
    for (int ti = 0; ti < 2; ++ti) {
        const RelTable &t = ti == 0 ? rela_ : jmprel_;
        for (uint64_t i = 0; i < t.n; ++i) {
            const uint8_t *r = t.p + i * kRelaSize;
            const uint64_t offset = ld64(r), rinfo = ld64(r + 8);
            const uint32_t type = uint32_t(rinfo), sym = uint32_t(rinfo >> 32);
            const std::string what = std::string(t.what) + " relocation " + std::to_string(i);
            unsigned width;
            bool looks_up;
            if (ti == 0 && i < nrelative_) {
                if (write_ok(offset, 8, what) != UCX_IFUNC_OK) return UCX_IFUNC_ERR_BAD_CODE;
                continue;
            }
            switch (reloc_kind(machine_, type, &width, &looks_up)) {
            case kNone:
                continue;
            case kUnknown:
                return bad(why_, "ELF: " + what + " has type " + std::to_string(type) +
                                     ", which a target does not apply");
            case kCopy:
                return bad(why_, "ELF: " + what + " is a copy relocation, which a shared object may not have");
            case kIrelative:
                irelative = true;
                break;
            case kWrite:
                break;
            }
            if (write_ok(offset, width, what) != UCX_IFUNC_OK) return UCX_IFUNC_ERR_BAD_CODE;
            if (sym == 0) continue;
            if (looks_up) info_.dynsyms[sym - 1].relocated = true;
        }
    }
    if (irelative) info_.load_code.push_back("IRELATIVE relocation (its resolver runs at load)");

    // RELR: an even entry is an address, an odd one a bitmap of the 63
    // words after the last address.
    uint64_t where = 0;
    bool based = false;
    for (uint64_t i = 0; i < nrelr_; ++i) {
        uint64_t e = ld64(relr_ + 8 * i);
        const std::string what = "DT_RELR entry " + std::to_string(i);
        if ((e & 1) == 0) {
            if (write_ok(e, 8, what) != UCX_IFUNC_OK) return UCX_IFUNC_ERR_BAD_CODE;
            where = e + 8;
            based = true;
        } else {
            if (!based) return bad(why_, "ELF: " + what + " is a bitmap before any address");
            for (uint64_t k = 0; (e >>= 1) != 0; ++k)
                if ((e & 1) && write_ok(where + 8 * k, 8, what) != UCX_IFUNC_OK) return UCX_IFUNC_ERR_BAD_CODE;
            if (where > kMaxVaddr) return bad(why_, "ELF: " + what + " runs past the address space");
            where += 63 * 8;
        }
    }
    return UCX_IFUNC_OK;
}

}  // namespace

ucx_ifunc_status_t elf_inspect(const uint8_t *data, size_t size, ElfInfo *out, std::string *why)
{
    Reader r(data, size, why);
    return r.run(out);
}

ucx_ifunc_status_t elf_check_load_code(const ElfInfo &info, std::string *why)
{
    if (info.load_code.empty()) return UCX_IFUNC_OK;
    std::string list;
    const size_t shown = std::min<size_t>(info.load_code.size(), 6);
    for (size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + info.load_code[i];
    if (shown < info.load_code.size()) list += " and " + std::to_string(info.load_code.size() - shown) + " more";
    if (why)
        *why = "native part would run code when loaded or unloaded: " + list +
               " (injected code may have no constructors, destructors or IFUNC resolvers)";
    return UCX_IFUNC_ERR_BAD_CODE;
}

uint16_t elf_host_machine()
{
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#else
#error "XRDMA: unsupported host architecture (add its e_machine to elf_reader.cc)"
#endif
}

}  // namespace xrdma
