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

}  // namespace xrdma
