// Minimal ELF64 reader: enough to check that a native part is a shared
// object for this machine and to list its dynamic symbols, without loading it.
#pragma once

#include "ucx_ifunc.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xrdma {

struct ElfSymbol {
    std::string name;
    bool defined;  // false: imported (undefined) symbol
};

struct ElfInfo {
    uint16_t machine;  // e_machine (EM_X86_64 = 62, EM_AARCH64 = 183)
    std::vector<ElfSymbol> dynsyms;
};

// Validate bounds of header, section headers, .dynsym and .dynstr and read
// them. Returns UCX_IFUNC_OK or UCX_IFUNC_ERR_BAD_CODE with @p why set (not a
// 64-bit little-endian ELF, not ET_DYN, out-of-bounds tables, ...).
ucx_ifunc_status_t elf_inspect(const uint8_t *data, size_t size, ElfInfo *out,
                               std::string *why);

// e_machine of the running process.
uint16_t elf_host_machine();

}  // namespace xrdma
