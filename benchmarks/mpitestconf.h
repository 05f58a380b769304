/* mpitestconf.h for MPICH's test helpers (test/mpi/util, test/mpi/include)
 * built by benchmarks/mpich-rma against Open MPI on Debian 12, in place of
 * the header MPICH's test configure generates: what this platform has. */
#ifndef XRDMA_MPITESTCONF_H
#define XRDMA_MPITESTCONF_H

#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
/* Open MPI 4.1 implements MPI 3.1: windows and MPI_Init_thread. */
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
/* POSIX threads (mpithreadtest.h's THREAD_PACKAGE_POSIX). */
#define THREAD_PACKAGE_NAME 2

#endif
