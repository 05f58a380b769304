/* The object the installed linker scripts (libmpix_xrdma.so,
 * libmpix_xrdma_f08.so) put into every program ahead of XRDMA's libraries.
 *
 * The core interposes MPI_Init, MPI_Finalize and the MPI_Win_* calls, so it
 * must be a direct dependency of the program, before libmpi. With the
 * linker's --as-needed (Debian's default) a shared library stays on the
 * program's needed list only if an object linked before it refers to one of
 * its symbols; a Fortran program refers to none of the core's, so the core
 * was dropped and loaded after libmpi, as a dependency of a dependency: no
 * window was set up. A linker script cannot turn --as-needed off, but an
 * object it names is always linked: these references keep the libraries,
 * in the script's order. (Compiled without the build's sanitizer flags: it
 * is linked into programs built without them.) */

/* Declared without their parameters: only the addresses are taken. */
int xrdma_mpi_progress(void); /* libmpix_xrdma_core */
#ifdef XRDMA_LINK_F08
int xrdma_f08_xinvoke(); /* libmpix_xrdma_f08 */
#endif

__attribute__((used)) static int (*const xrdma_link_anchor[])() = {
#ifdef XRDMA_LINK_F08
    xrdma_f08_xinvoke,
#endif
    xrdma_mpi_progress,
};
