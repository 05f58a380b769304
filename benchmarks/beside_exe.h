/* Where make puts a program's ifunc images: beside the program. Shared by
 * the benchmarks (bench_common.h) and the examples, which find their images
 * there unless told otherwise. Header-only. */
#ifndef XRDMA_BESIDE_EXE_H
#define XRDMA_BESIDE_EXE_H

#include <limits.h>
#include <string.h>
#include <unistd.h>

/* @p name in the directory of this executable (@p name itself if
 * /proc/self/exe cannot be read). One buffer per program: use the path
 * before the next call. */
__attribute__((unused)) static const char *beside_exe(const char *name)
{
    static char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - strlen(name) - 2);
    if (n <= 0) return name;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    strcpy(slash ? slash + 1 : path, name);
    return path;
}

#endif
