// SHA-256 (FIPS 180-4): content hash of images. A thin wrapper over
// OpenSSL's libcrypto, which uses the CPU's SHA instructions (x86 SHA-NI,
// ARMv8 SHA2) where present: about 20x faster than portable C on a 14 KiB
// image, the bulk of a cold image's first use.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace xrdma {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256 &) = delete;
    Sha256 &operator=(const Sha256 &) = delete;
    void update(const void *data, size_t len);
    std::array<uint8_t, 32> finish();
    static std::array<uint8_t, 32> of(const void *data, size_t len);

    // libcrypto's first use in a process costs about 0.7 ms (it loads its
    // default provider): a context calls this when it is created, so that
    // the first image that arrives does not pay it.
    static void prepare();

private:
    EVP_MD_CTX *ctx_;
};

}  // namespace xrdma
