# The MPI layer: libmpix_xrdma = MPIX_* entry points (ompi_ext/xrdma/c, one
# file per function, as in an Open MPI mpiext) + the C++ core.
lib_LTLIBRARIES += libmpix_xrdma.la
libmpix_xrdma_la_SOURCES = \
	ompi_ext/xrdma/c/MPIX_Xput.c ompi_ext/xrdma/c/MPIX_Rxput.c \
	ompi_ext/xrdma/c/MPIX_Xget.c ompi_ext/xrdma/c/MPIX_Rxget.c \
	ompi_ext/xrdma/c/MPIX_Xinvoke.c ompi_ext/xrdma/c/MPIX_Rxinvoke.c \
	ompi_ext/xrdma/c/MPIX_Ifunc_load.c ompi_ext/xrdma/c/MPIX_Ifunc_load_mem.c \
	ompi_ext/xrdma/c/MPIX_Ifunc_free.c ompi_ext/xrdma/c/MPIX_Xprogress.c \
	ompi_ext/xrdma/c/mpiext_xrdma_c.h ompi_ext/xrdma/c/mpix_xrdma.h \
	ompi_ext/xrdma/core/xrdma_mpi.h ompi_ext/xrdma/core/op_wire.h \
	ompi_ext/xrdma/core/errors.cc ompi_ext/xrdma/core/errors.h \
	ompi_ext/xrdma/core/datatype.cc ompi_ext/xrdma/core/datatype.h \
	ompi_ext/xrdma/core/runtime.cc ompi_ext/xrdma/core/runtime.h \
	ompi_ext/xrdma/core/window.cc ompi_ext/xrdma/core/window.h \
	ompi_ext/xrdma/core/target.cc ompi_ext/xrdma/core/ops.cc \
	ompi_ext/xrdma/core/ifunc.cc ompi_ext/xrdma/core/pmpi.cc \
	ompi_ext/xrdma/core/progress_hook.cc
libmpix_xrdma_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/c \
	-I$(top_srcdir)/ompi_ext/xrdma/core $(MPI_CPPFLAGS) $(HWLOC_CFLAGS) -DOMPI_SKIP_MPICXX=1
libmpix_xrdma_la_LIBADD = libucx_ifunc.la $(MPI_LIBS) -lopen-pal $(HWLOC_LIBS) $(UCX_LIBS)
libmpix_xrdma_la_LDFLAGS = -version-info 0:0:0
include_HEADERS += ompi_ext/xrdma/c/mpix_xrdma.h ompi_ext/xrdma/c/mpiext_xrdma_c.h
pkgconfig_DATA += ompi_ext/mpix-xrdma.pc
