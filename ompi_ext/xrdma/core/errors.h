// MPIX error classes and per-failure error codes with readable strings.
#pragma once

#include "ucx_ifunc.h"

#include <mpi.h>
#include <string>

// The MPIX_ERR_* classes, declared for programs in mpiext_xrdma_c.h:
// defined in errors.cc, made by errors_init().
extern "C" int MPIX_ERR_IFUNC_IMAGE, MPIX_ERR_IFUNC_LINK, MPIX_ERR_IFUNC_DENIED, MPIX_ERR_IFUNC_FAULT,
    MPIX_ERR_IFUNC_RETURN, MPIX_ERR_IFUNC_TIMEOUT, MPIX_ERR_PEER;

namespace xrdma::mpi {

// Create the MPIX_ERR_* classes (once; needs MPI initialised).
void errors_init();
// MPI error class for a plugin status (MPI_SUCCESS for OK).
int error_class_of(ucx_ifunc_status_t st);
// An MPI error code of @p cls whose MPI_Error_string is @p message.
int error_code(int cls, const std::string &message);

}  // namespace xrdma::mpi
