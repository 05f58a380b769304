// Minimal ELF64 reader: enough to check that a native part is a shared
// object the dynamic loader can load without harm, and to list what it
// binds to, without loading it.
#pragma once

#include "ucx_ifunc.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xrdma {

struct ElfSymbol {
    std::string name;
    bool defined;             // false: imported (undefined) symbol
    uint8_t type = 0;         // STT_* (STT_FUNC = 2, STT_GNU_IFUNC = 10, ...)
    uint8_t bind = 0;         // STB_* (STB_LOCAL = 0, STB_GLOBAL = 1, STB_WEAK = 2)
    uint8_t visibility = 0;   // STV_* (STV_DEFAULT = 0, STV_HIDDEN = 2, ...)
    bool relocated = false;   // a relocation refers to it (ld.so looks its name up)
    bool in_code = false;     // defined, and its address lies in an executable segment
};

struct ElfInfo {
    uint16_t machine;  // e_machine (EM_X86_64 = 62, EM_AARCH64 = 183)
    // The dynamic symbol table the loader uses (found through the dynamic
    // section, not the section headers), without the null symbol.
    std::vector<ElfSymbol> dynsyms;
    std::vector<std::string> needed;  // DT_NEEDED, in order
    // What would run code of the object itself at load or unload, readable:
    // "DT_INIT", "DT_INIT_ARRAY (2 entries)", "DT_FINI", "DT_FINI_ARRAY ...",
    // "DT_PREINIT_ARRAY ...", "IFUNC symbol 'x'", "IRELATIVE relocation".
    std::vector<std::string> load_code;
    // Writable data of the object's own, readable: ".data (8 bytes)",
    // ".bss (4 bytes)". Not listed: what only the loader writes (GOT, the
    // dynamic section, relocated read-only data, init/fini arrays).
    std::vector<std::string> writable_data;
};

// Validate @p data as an ELF64 little-endian shared object and read it.
// Beyond the headers, section headers, .dynsym and .dynstr, this follows
// what the dynamic loader reads (program headers, dynamic section, symbol,
// string, hash, version and relocation tables) and refuses, with
// UCX_IFUNC_ERR_BAD_CODE and @p why set, anything that would make loading
// it read or write outside the object or misread it: every table inside
// the file's loaded bytes, every relocation a write into a writable
// segment that leaves those tables alone, hash chains that end. It also
// refuses objects that would change the process around them: executable
// stack, text relocations, paths in DT_NEEDED (a search path is accepted:
// the loader drops it, see start_files.h),
// filters and audit libraries, copy relocations, unique symbols. Code that
// would run at load is not refused here but listed in load_code (see
// elf_check_load_code()). e_machine is reported, not checked; relocations
// are checked only in objects for this process's machine (x86-64, AArch64).
ucx_ifunc_status_t elf_inspect(const uint8_t *data, size_t size, ElfInfo *out,
                               std::string *why);

// UCX_IFUNC_OK if nothing of the object runs before its entries are called
// (load_code is empty), else UCX_IFUNC_ERR_BAD_CODE naming what would run.
ucx_ifunc_status_t elf_check_load_code(const ElfInfo &info, std::string *why);

// e_machine of the running process.
uint16_t elf_host_machine();

}  // namespace xrdma
