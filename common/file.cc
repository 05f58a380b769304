#include "xrdma_common/file.h"

#include <cerrno>
#include <cstdio>

namespace xrdma {

int read_whole_file(const std::string &path, std::vector<uint8_t> *out, size_t max)
{
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return errno ? errno : EIO;
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        out->insert(out->end(), buf, buf + n);
        if (out->size() > max) {
            fclose(f);
            return EFBIG;
        }
    }
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    return err;
}

}  // namespace xrdma
