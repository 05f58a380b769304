// Replays inputs through an API fuzz harness (tests/fuzz/harness_api.cc),
// built with the normal compiler, in a one-process MPI job:
//   mpirun -n 1 replay_api api_load|api_xop FILE|DIR...
// (a DIR: the files in it, in name order; mpirun limits the length of a
// command line). Prints each file's name before it runs it, so that a crash
// or a hang names the input (test_fuzz_regressions reads that); exit status
// 0 when all ran.
#include "harness.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "api_load") != 0 && strcmp(argv[1], "api_xop") != 0)) {
        fprintf(stderr, "usage: %s api_load|api_xop FILE|DIR...\n", argv[0]);
        return 2;
    }
    auto harness = strcmp(argv[1], "api_load") == 0 ? xrdma_fuzz::fuzz_api_load : xrdma_fuzz::fuzz_api_xop;
    std::vector<std::string> files;
    for (int i = 2; i < argc; ++i) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            files.push_back(argv[i]);
            continue;
        }
        std::vector<std::string> in_dir;
        while (struct dirent *e = readdir(d))
            if (e->d_name[0] != '.') in_dir.push_back(std::string(argv[i]) + "/" + e->d_name);
        closedir(d);
        std::sort(in_dir.begin(), in_dir.end());
        files.insert(files.end(), in_dir.begin(), in_dir.end());
    }
    for (const std::string &path : files) {
        printf("replaying %s\n", path.c_str());
        fflush(stdout);
        std::vector<uint8_t> in;
        FILE *f = fopen(path.c_str(), "rb");
        if (!f) {
            fprintf(stderr, "cannot open %s\n", path.c_str());
            return 4;
        }
        for (int c; (c = fgetc(f)) != EOF;) in.push_back(uint8_t(c));
        fclose(f);
        harness(in.data(), in.size());
    }
    printf("%zu %s inputs replayed\n", files.size(), argv[1]);
    return 0;  // (MPI_Finalize runs at exit)
}
