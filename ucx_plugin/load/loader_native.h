// Load the native part of an image from memory (memfd + dlopen): the target
// never needs a file of the code.
#pragma once

#include "image/elf_reader.h"
#include "image/image.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xrdma {

class LoadedCode {
public:
    virtual ~LoadedCode() = default;
    // Address of exported symbol @p name, or nullptr.
    virtual void *symbol(const std::string &name) const = 0;
    // Whether @p pc is an instruction of this code (fault containment).
    virtual bool contains(uintptr_t pc) const = 0;

    // Whether the code means the same in any process that maps the memory it
    // is given: no writable data of its own, no target-only state
    // (xrdma_user_ptr, xrdma_target_args). Only such code may run outside
    // its target (node-local execution); decided by the loader from what it
    // inspects anyway. @c why_pinned says why not, for the debug log.
    bool movable = false;
    std::string why_pinned = "not inspected";
    // What it binds to in this process, sorted (ucx_ifunc_ctx_imports()).
    std::vector<std::string> imports;
    bool imports_known = false;  // (read by its loader: a bitcode part compiled by the helper may not have them)
};

// The native part of @p img for this machine (the last, if several), or
// nullptr.
const PartView *host_native_part(const ImageView &img);
// What native code @p elf binds to in this process (dynamic symbols: the
// policy checks these).
std::vector<std::string> native_imports(const ElfInfo &elf);

// Pick the native part for this machine from @p img and load it.
// Errors: NO_PART (no native part for this triple), BAD_CODE (not a shared
// object for this machine), LINK (dlopen failed: unresolved symbol, ...).
ucx_ifunc_status_t load_native(const ImageView &img, const std::string &label,
                               std::unique_ptr<LoadedCode> *out, std::string *why);

}  // namespace xrdma
