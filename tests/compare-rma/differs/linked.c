/* Prints whether XRDMA's core (xrdma_mpi_xop) is linked: compare-rma must
 * report the difference. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("XRDMA core %s\n", dlsym(RTLD_DEFAULT, "xrdma_mpi_xop") ? "present" : "absent");
    MPI_Finalize();
    return 0;
}
