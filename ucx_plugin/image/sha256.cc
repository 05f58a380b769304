// SHA-256 from libcrypto (EVP interface: the one OpenSSL 3 maintains; the
// SHA256_Init family is deprecated). The algorithm is fetched once per
// process; an allocation failure inside libcrypto is the only possible
// error and ends the process like any other failed allocation.
#include "image/sha256.h"

#include <cstdio>
#include <cstdlib>
#include <openssl/evp.h>

namespace xrdma {

namespace {

const EVP_MD *sha256_md()
{
    static const EVP_MD *md = [] {
        const EVP_MD *m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
        if (!m) m = EVP_sha256();
        return m;
    }();
    return md;
}

[[noreturn]] void fail(const char *what)
{
    fprintf(stderr, "xrdma: libcrypto %s failed (out of memory?)\n", what);
    abort();
}

}  // namespace

void Sha256::prepare() { (void)sha256_md(); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new())
{
    if (!ctx_ || EVP_DigestInit_ex(ctx_, sha256_md(), nullptr) != 1) fail("SHA-256 init");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void *data, size_t len)
{
    if (len && EVP_DigestUpdate(ctx_, data, len) != 1) fail("SHA-256 update");
}

std::array<uint8_t, 32> Sha256::finish()
{
    std::array<uint8_t, 32> out{};
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx_, out.data(), &n) != 1 || n != out.size()) fail("SHA-256 final");
    return out;
}

std::array<uint8_t, 32> Sha256::of(const void *data, size_t len)
{
    Sha256 s;
    s.update(data, len);
    return s.finish();
}

}  // namespace xrdma
