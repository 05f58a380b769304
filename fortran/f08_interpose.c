/* Open MPI's Fortran bindings, routed through XRDMA's window calls.
 *
 * XRDMA sets up inside MPI_Win_allocate & co. and completes X-operations
 * inside MPI_Win_flush & co. by defining those C functions ahead of libmpi
 * (ompi_ext/xrdma/core/pmpi.cc). Open MPI 4.1's Fortran bindings do not call
 * them: mpi_f08's MPI_Win_flush calls ompi_win_flush_f (libmpi_mpifh), which
 * calls PMPI_Win_flush, so a Fortran window would never be set up for
 * X-operations and its synchronisation would not complete them. This file
 * defines the ompi_*_f entry points that mpi_f08 calls for exactly the calls
 * XRDMA interposes, with Open MPI's own prototypes
 * (ompi/mpi/fortran/mpif-h/prototypes_mpi.h), and lets them call the C
 * functions instead: libmpix_xrdma_f08 is linked ahead of Open MPI's Fortran
 * libraries, so libmpi_usempif08 binds its references here. Each function
 * does what Open MPI's does (convert handles, call, convert back, set
 * ierr), nothing else. */
#include <mpi.h>
#include <stddef.h>

#define F2C_RC(ierr, rc)                    \
    do {                                    \
        if (ierr) *(ierr) = (MPI_Fint)(rc); \
    } while (0)

void ompi_init_f(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    F2C_RC(ierr, MPI_Init(&argc, &argv));
}

void ompi_init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0, prov = 0;
    char **argv = NULL;
    int rc = MPI_Init_thread(&argc, &argv, (int)*required, &prov);
    if (rc == MPI_SUCCESS) *provided = (MPI_Fint)prov;
    F2C_RC(ierr, rc);
}

void ompi_finalize_f(MPI_Fint *ierr) { F2C_RC(ierr, MPI_Finalize()); }

void ompi_win_create_f(char *base, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
                       MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int rc = MPI_Win_create(base, *size, (int)*disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), &w);
    if (rc == MPI_SUCCESS) *win = MPI_Win_c2f(w);
    F2C_RC(ierr, rc);
}

void ompi_win_allocate_f(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm, char *baseptr,
                         MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(*size, (int)*disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), baseptr, &w);
    if (rc == MPI_SUCCESS) *win = MPI_Win_c2f(w);
    F2C_RC(ierr, rc);
}

void ompi_win_allocate_shared_f(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
                                char *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared(*size, (int)*disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), baseptr,
                                     &w);
    if (rc == MPI_SUCCESS) *win = MPI_Win_c2f(w);
    F2C_RC(ierr, rc);
}

void ompi_win_create_dynamic_f(MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_WIN_NULL;
    int rc = MPI_Win_create_dynamic(MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), &w);
    if (rc == MPI_SUCCESS) *win = MPI_Win_c2f(w);
    F2C_RC(ierr, rc);
}

void ompi_win_attach_f(MPI_Fint *win, char *base, MPI_Aint *size, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_attach(MPI_Win_f2c(*win), base, *size));
}

void ompi_win_detach_f(MPI_Fint *win, char *base, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_detach(MPI_Win_f2c(*win), base));
}

void ompi_win_free_f(MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win w = MPI_Win_f2c(*win);
    int rc = MPI_Win_free(&w);
    if (rc == MPI_SUCCESS) *win = MPI_Win_c2f(w);
    F2C_RC(ierr, rc);
}

void ompi_win_flush_f(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_flush((int)*rank, MPI_Win_f2c(*win)));
}

void ompi_win_flush_all_f(MPI_Fint *win, MPI_Fint *ierr) { F2C_RC(ierr, MPI_Win_flush_all(MPI_Win_f2c(*win))); }

void ompi_win_flush_local_f(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_flush_local((int)*rank, MPI_Win_f2c(*win)));
}

void ompi_win_flush_local_all_f(MPI_Fint *win, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_flush_local_all(MPI_Win_f2c(*win)));
}

void ompi_win_unlock_f(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_unlock((int)*rank, MPI_Win_f2c(*win)));
}

void ompi_win_unlock_all_f(MPI_Fint *win, MPI_Fint *ierr) { F2C_RC(ierr, MPI_Win_unlock_all(MPI_Win_f2c(*win))); }

void ompi_win_fence_f(MPI_Fint *assert_, MPI_Fint *win, MPI_Fint *ierr)
{
    F2C_RC(ierr, MPI_Win_fence((int)*assert_, MPI_Win_f2c(*win)));
}

void ompi_win_wait_f(MPI_Fint *win, MPI_Fint *ierr) { F2C_RC(ierr, MPI_Win_wait(MPI_Win_f2c(*win))); }

void ompi_win_complete_f(MPI_Fint *win, MPI_Fint *ierr) { F2C_RC(ierr, MPI_Win_complete(MPI_Win_f2c(*win))); }
