#include "xrdma_common/file.h"

#include <algorithm>
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

void name_lines(const char *text, size_t len, std::vector<std::string> *out)
{
    const std::string list(text, len);
    for (size_t b = 0, e; b < list.size(); b = e + 1) {
        e = std::min(list.find('\n', b), list.size());
        std::string line = list.substr(b, e - b);
        line.resize(std::min(line.find('#'), line.size()));
        const size_t first = line.find_first_not_of(" \t\r\f\v"), last = line.find_last_not_of(" \t\r\f\v");
        if (first != std::string::npos) out->push_back(line.substr(first, last - first + 1));
    }
}

}  // namespace xrdma
