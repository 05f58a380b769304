/* What examples/mpi_accumulate.c and its injected histogram insert
 * (mpi_accumulate_ifunc.c) share: a bin of the histogram in every rank's
 * window, a sample the origin sends, and the arguments. Declared once, so
 * that the program and the function it ships cannot disagree on a layout. */
#ifndef XRDMA_EXAMPLE_MPI_ACCUMULATE_H
#define XRDMA_EXAMPLE_MPI_ACCUMULATE_H
#include <stdint.h>

struct bin {
    int64_t count, sum, min, max;
};
struct sample {
    int64_t key, value;
};
struct hist_args {
    int64_t bin_width; /* keys per bin */
};

#endif
