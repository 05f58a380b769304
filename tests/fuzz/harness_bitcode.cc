// Fuzz harness of the bitcode path: mutated bitcode from real
// images through what a target does with a cold bitcode image, the plugin's
// own code (libucx_ifunc, its JIT module and the compile helper process):
// the image is checked and cached (CodeCache::insert), the bitcode is parsed,
// verified and compiled in the helper, the object it returns is checked
// against XRDMA_SYMBOLS and linked here. Nothing of it runs. Every input must
// end in success or in a clear error; a crash or hang of this process (the
// target) is a finding. The helper may crash: that is an error, not a find.
//
// Input: entry names (comma-separated, as the image lists them) NUL bitcode.
#include "harness.h"

#include "load/code_cache.h"
#include "image/image.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace xrdma_fuzz {

namespace {

// Entries the image lists: the input's names that are C identifiers
// (mutations break some), else "f".
std::vector<std::string> entries_of(const std::string &list)
{
    std::vector<std::string> out;
    for (size_t b = 0, e; b <= list.size() && out.size() < 16; b = e + 1) {
        e = std::min(list.find(',', b), list.size());
        std::string name = list.substr(b, e - b);
        bool dup = false;
        for (const std::string &o : out) dup |= o == name;
        if (!dup && name.size() <= xrdma::kMaxEntryLen && xrdma::is_c_identifier(name)) out.push_back(name);
    }
    if (out.empty()) out.push_back("f");
    return out;
}

[[noreturn]] void fail(const char *what, const std::string &detail)
{
    fprintf(stderr, "fuzz_bitcode: %s: %s\n", what, detail.c_str());
    abort();
}

// Load the input's image as a target would: its status, why, and the
// loaded image on success.
ucx_ifunc_status_t load(const uint8_t *data, size_t size, std::vector<std::string> *entries,
                        std::shared_ptr<xrdma::CachedImage> *out, std::string *why)
{
    // A compile that hangs must end in an error, well before libFuzzer's
    // own -timeout. (Set before the helper starts; the user's value wins.)
    setenv("XRDMA_JIT_TIMEOUT", "10", 0);
    static xrdma::CodeCache cache(4);
    const uint8_t *nul = static_cast<const uint8_t *>(memchr(data, 0, size));
    const size_t names = nul ? size_t(nul - data) : 0;
    *entries = entries_of(std::string(reinterpret_cast<const char *>(data), names));
    const size_t at = nul ? names + 1 : 0;
    std::vector<uint8_t> bc(data + at, data + size);
    const std::vector<uint8_t> img =
        xrdma::image_build(*entries, {{xrdma::PartKind::llvm_bitcode, xrdma::host_triple(), bc}});
    xrdma::ImageView v;
    if (xrdma::image_parse(img.data(), img.size(), &v, why) != UCX_IFUNC_OK) fail("image_build", *why);
    ucx_ifunc_status_t st = cache.insert(v.hash, img.data(), img.size(), out, why);
    if (st == UCX_IFUNC_OK) cache.clear();  // the next input compiles again
    return st;
}

}  // namespace

bool bitcode_loads(const uint8_t *data, size_t size)
{
    std::vector<std::string> entries;
    std::shared_ptr<xrdma::CachedImage> out;
    std::string why;
    return load(data, size, &entries, &out, &why) == UCX_IFUNC_OK;
}

void fuzz_bitcode(const uint8_t *data, size_t size)
{
    std::vector<std::string> entries;
    std::shared_ptr<xrdma::CachedImage> out;
    std::string why;
    ucx_ifunc_status_t st = load(data, size, &entries, &out, &why);
    if (st == UCX_IFUNC_OK) {
        if (!out || !out->code) fail("loaded", "no code");
        for (const std::string &e : entries) out->entry(e);  // resolves (never calls) what it defines
        return;
    }
    if (st == UCX_IFUNC_INPROGRESS || why.empty()) fail("error without a message", ucx_ifunc_status_string(st));
    for (unsigned char c : why)
        if (c < 0x20 || c >= 0x7f) fail("unprintable error message", why);
}

}  // namespace xrdma_fuzz
