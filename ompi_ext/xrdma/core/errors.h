// MPIX error classes and per-failure error codes with readable strings.
#pragma once

#include "ucx_ifunc.h"

#include <mpi.h>
#include <string>

namespace xrdma::mpi {

// Create the MPIX_ERR_* classes (once; needs MPI initialised).
void errors_init();
// MPI error class for a plugin status (MPI_SUCCESS for OK).
int error_class_of(ucx_ifunc_status_t st);
// An MPI error code of @p cls whose MPI_Error_string is @p message.
int error_code(int cls, const std::string &message);

}  // namespace xrdma::mpi
