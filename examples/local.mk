# examples: the X-RDMA pointer-chase demo (run it with scripts/demo).
#
# xrdma_chase is an MPI program that also drives UCX directly; its ifunc
# (chase_ifunc.c) is compiled into an image by xrdma-cc when `make` runs,
# and read only by rank 0 at run time.
noinst_PROGRAMS += examples/xrdma_chase
examples_xrdma_chase_SOURCES = examples/xrdma_chase.c examples/xrdma_chase.h
examples_xrdma_chase_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
examples_xrdma_chase_LDADD = libucx_ifunc.la $(UCX_LIBS) $(MPI_LIBS)
# A real executable (no libtool wrapper): it finds its image beside itself.
examples_xrdma_chase_LDFLAGS = -no-install
# Built with the program, so plain `make` leaves a runnable demo.
EXTRA_examples_xrdma_chase_DEPENDENCIES = $(EXAMPLE_IFUNC_IMAGES)

EXAMPLE_IFUNC_IMAGES = examples/chase_ifunc.xfn
EXTRA_DIST += examples/chase_ifunc.c examples/README.md
CLEANFILES += $(EXAMPLE_IFUNC_IMAGES)
examples/chase_ifunc.xfn: examples/xrdma_chase.h

