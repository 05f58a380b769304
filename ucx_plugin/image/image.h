// Image container: what xrdma-cc writes and what travels to a target.
// Layout and rules: man/xrdma-image.5. Every field is validated by parse().
#pragma once

#include "ucx_ifunc.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xrdma {

using Hash = std::array<uint8_t, 32>;  // SHA-256

// library_list: names of shared libraries a target loads before it links
// the bitcode part (the published API's <name>.deps), one per line.
enum class PartKind : uint32_t { native_elf = 1, llvm_bitcode = 2, library_list = 3 };

// One part as seen in a parsed image: views into the image bytes.
struct PartView {
    PartKind kind;
    std::string_view triple;  // e.g. "x86_64-linux-gnu"
    const uint8_t *data;
    size_t size;
};

// A validated image: views stay valid while the bytes they point into live.
struct ImageView {
    uint16_t version;
    Hash hash;
    std::vector<std::string_view> entries;
    std::vector<PartView> parts;
    bool has_entry(std::string_view name) const;
};

// Validate @p bytes and fill @p out. Returns a distinct status per class of
// damage: TRUNCATED, BAD_MAGIC, BAD_VERSION, BAD_LENGTH, HASH_MISMATCH, and
// NO_ENTRY for an image without entries. @p why gets a readable cause.
// Without @p check_hash the header's hash is taken as it is (a look at the
// parts before the real parse, which checks it).
ucx_ifunc_status_t image_parse(const uint8_t *bytes, size_t size, ImageView *out,
                               std::string *why, bool check_hash = true);

// What to write into an image.
struct PartSpec {
    PartKind kind;
    std::string triple;
    std::vector<uint8_t> data;
};

// Build an image (with its hash) from entries and parts.
std::vector<uint8_t> image_build(const std::vector<std::string> &entries,
                                 const std::vector<PartSpec> &parts);

// Hash of an image as stored in its header (no validation beyond the size).
bool image_peek_hash(const uint8_t *bytes, size_t size, Hash *out);

// The parts of @p img for error messages: "native <triple>, bitcode <triple>",
// "none" if it has none.
std::string describe_parts(const ImageView &img);

// The triple this process runs on, as written into native parts.
const std::string &host_triple();
// A triple without its vendor field and with LLVM's aliases resolved:
// x86_64-unknown-linux-gnu, x86_64-pc-linux-gnu, amd64-linux -> x86_64-linux-gnu.
std::string triple_normal(std::string_view triple);
// Whether code for @p triple runs in this process (compared normalised).
bool triple_is_host(std::string_view triple);

// The whole file at @p path into @p out (appended; read_whole_file() with
// the plugin's statuses). UCX_IFUNC_ERR_IO if it cannot be opened or read
// (errno tells why), UCX_IFUNC_ERR_DENIED as soon as it holds more than
// @p max bytes (the rest is not read).
ucx_ifunc_status_t read_file(const std::string &path, std::vector<uint8_t> *out, size_t max = SIZE_MAX);

// Longest entry name an image (and an invocation) may carry.
constexpr size_t kMaxEntryLen = 255;
// Whether @p s is a C identifier (what entry names must be).
bool is_c_identifier(std::string_view s);
// Printable excerpt of untrusted bytes for error messages: at most @p max
// characters, others as \xNN.
std::string printable(std::string_view s, size_t max = 40);

std::string hash_hex(const Hash &h, size_t nbytes = 32);

}  // namespace xrdma
