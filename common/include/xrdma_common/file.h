// Whole files into memory: images, parts and lists, in every layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xrdma {

// Append the whole file at @p path to @p out. 0, or an errno value: why it
// could not be opened or read, or EFBIG as soon as it holds more than
// @p max bytes (the rest is not read).
int read_whole_file(const std::string &path, std::vector<uint8_t> *out, size_t max = SIZE_MAX);

// The names of a list in XRDMA's one format (an allowlist file, an image's
// library list): one name a line, '#' starts a comment, blanks around a name
// and empty lines ignored. Appended to @p out in order.
void name_lines(const char *text, size_t len, std::vector<std::string> *out);

}  // namespace xrdma
