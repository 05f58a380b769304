# examples: three MPI programs on the MPIX API (below; scripts/demo runs
# mpi_pointer_chase) and the plugin-level pointer chase.
#
# xrdma_chase is an MPI program that also drives UCX directly; its ifunc
# (chase_ifunc.c) is compiled into an image by xrdma-cc when `make` runs,
# and read only by rank 0 at run time.
noinst_PROGRAMS += examples/xrdma_chase
# The three pointer-chase programs (these two and benchmarks/xrdma_pointer_chase)
# share the list, its walk, the command line and the start: chase_common.c.
CHASE_COMMON = examples/chase_common.c examples/chase_common.h
examples_xrdma_chase_SOURCES = examples/xrdma_chase.c examples/xrdma_chase.h $(CHASE_COMMON) \
	benchmarks/bench_common.h
# bench_common.h: the benchmarks' UCX-over-MPI start (worker, endpoints,
# ifunc context), which this plugin-level example shares.
examples_xrdma_chase_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS) -I$(top_srcdir)/benchmarks
examples_xrdma_chase_LDADD = libucx_ifunc.la $(UCX_LIBS) $(MPI_LIBS)
# A real executable (no libtool wrapper): it finds its image beside itself.
examples_xrdma_chase_LDFLAGS = -no-install
# Built with the program, so plain `make` leaves a runnable demo.
EXTRA_examples_xrdma_chase_DEPENDENCIES = examples/chase_ifunc.xfn

# xrdma_batch: batches of invocations acknowledged when the origin asks
# (UCX_IFUNC_INVOKE_LAZY_ACK, ucx_ifunc_request_acks()); the same start.
noinst_PROGRAMS += examples/xrdma_batch
examples_xrdma_batch_SOURCES = examples/xrdma_batch.c $(CHASE_COMMON) benchmarks/bench_common.h
examples_xrdma_batch_CPPFLAGS = $(examples_xrdma_chase_CPPFLAGS)
examples_xrdma_batch_LDADD = $(examples_xrdma_chase_LDADD)
examples_xrdma_batch_LDFLAGS = -no-install
EXTRA_examples_xrdma_batch_DEPENDENCIES = examples/batch_ifunc.xfn

EXAMPLE_IFUNC_IMAGES = examples/chase_ifunc.xfn examples/batch_ifunc.xfn
EXTRA_DIST += examples/chase_ifunc.c examples/batch_ifunc.c examples/README.md
CLEANFILES += $(EXAMPLE_IFUNC_IMAGES)
examples/chase_ifunc.xfn: examples/xrdma_chase.h

# The MPI examples: ordinary MPI programs with their own windows that link
# libmpix_xrdma and ship code with MPIX_Xput / MPIX_Xget. Each one's ifunc
# (examples/mpi_*_ifunc.c) is built into an image beside the program by
# xrdma-cc; only rank 0 reads it at run time. scripts/demo runs
# mpi_pointer_chase; tests/examples runs all three under mpirun. The core
# (PMPI interposition) must be a direct dependency ahead of libmpi, as for
# tests/mpi: see ompi_ext/local.mk. They find their images beside themselves
# (benchmarks/beside_exe.h) and share their error messages and exits
# (examples/mpi_example.h).
MPIX_EXAMPLE_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/c -I$(top_srcdir)/benchmarks
MPIX_EXAMPLE_SUPPORT = benchmarks/beside_exe.h examples/mpi_example.h
MPIX_EXAMPLE_LDADD = libmpix_xrdma_core.la libmpix_xrdma.la $(MPI_LIBS)
noinst_PROGRAMS += examples/mpi_pointer_chase examples/mpi_accumulate examples/mpi_filter examples/mpi_subarray_add \
	examples/mpi_stream_reduce
examples_mpi_pointer_chase_SOURCES = examples/mpi_pointer_chase.c examples/xrdma_chase.h $(CHASE_COMMON) \
	benchmarks/beside_exe.h
examples_mpi_pointer_chase_CPPFLAGS = $(MPIX_EXAMPLE_CPPFLAGS)
examples_mpi_pointer_chase_LDADD = $(MPIX_EXAMPLE_LDADD)
examples_mpi_pointer_chase_LDFLAGS = -no-install
EXTRA_examples_mpi_pointer_chase_DEPENDENCIES = examples/mpi_chase_ifunc.xfn
examples_mpi_accumulate_SOURCES = examples/mpi_accumulate.c examples/mpi_accumulate.h $(MPIX_EXAMPLE_SUPPORT)
examples_mpi_accumulate_CPPFLAGS = $(MPIX_EXAMPLE_CPPFLAGS)
examples_mpi_accumulate_LDADD = $(MPIX_EXAMPLE_LDADD)
examples_mpi_accumulate_LDFLAGS = -no-install
EXTRA_examples_mpi_accumulate_DEPENDENCIES = examples/mpi_accumulate_ifunc.xfn
examples_mpi_filter_SOURCES = examples/mpi_filter.c examples/mpi_filter.h $(MPIX_EXAMPLE_SUPPORT)
examples_mpi_filter_CPPFLAGS = $(MPIX_EXAMPLE_CPPFLAGS)
examples_mpi_filter_LDADD = $(MPIX_EXAMPLE_LDADD)
examples_mpi_filter_LDFLAGS = -no-install
EXTRA_examples_mpi_filter_DEPENDENCIES = examples/mpi_filter_ifunc.xfn

examples_mpi_subarray_add_SOURCES = examples/mpi_subarray_add.c $(MPIX_EXAMPLE_SUPPORT)
examples_mpi_subarray_add_CPPFLAGS = $(MPIX_EXAMPLE_CPPFLAGS)
examples_mpi_subarray_add_LDADD = $(MPIX_EXAMPLE_LDADD)
examples_mpi_subarray_add_LDFLAGS = -no-install
EXTRA_examples_mpi_subarray_add_DEPENDENCIES = examples/mpi_subarray_add_ifunc.xfn examples/mpi_subarray_add_plain_ifunc.xfn

examples_mpi_stream_reduce_SOURCES = examples/mpi_stream_reduce.c $(MPIX_EXAMPLE_SUPPORT)
examples_mpi_stream_reduce_CPPFLAGS = $(MPIX_EXAMPLE_CPPFLAGS)
examples_mpi_stream_reduce_LDADD = $(MPIX_EXAMPLE_LDADD)
examples_mpi_stream_reduce_LDFLAGS = -no-install
EXTRA_examples_mpi_stream_reduce_DEPENDENCIES = examples/mpi_stream_reduce_ifunc.xfn

MPIX_EXAMPLE_IFUNCS = examples/mpi_chase_ifunc.c examples/mpi_accumulate_ifunc.c examples/mpi_filter_ifunc.c \
	examples/mpi_subarray_add_ifunc.c examples/mpi_subarray_add_plain_ifunc.c examples/mpi_stream_reduce_ifunc.c
EXAMPLE_IFUNC_IMAGES += $(MPIX_EXAMPLE_IFUNCS:.c=.xfn)
EXTRA_DIST += $(MPIX_EXAMPLE_IFUNCS)
# Each program and its function share the layouts they exchange in a header.
examples/mpi_chase_ifunc.xfn: examples/xrdma_chase.h
examples/mpi_accumulate_ifunc.xfn: examples/mpi_accumulate.h
examples/mpi_filter_ifunc.xfn: examples/mpi_filter.h

# mpi_embedded carries its ifunc inside the program: xrdma-cc --c-array
# writes the image as a C array that MPIX_Ifunc_load_mem() loads.
noinst_PROGRAMS += examples/mpi_embedded
examples_mpi_embedded_SOURCES = examples/mpi_embedded.c
nodist_examples_mpi_embedded_SOURCES = examples/mpi_embedded_image.c
examples_mpi_embedded_CPPFLAGS = $(MPIX_EXAMPLE_CPPFLAGS)
examples_mpi_embedded_LDADD = $(MPIX_EXAMPLE_LDADD)
examples_mpi_embedded_LDFLAGS = -no-install
examples/mpi_embedded_image.c: examples/mpi_embedded_ifunc.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --c-array=add_image $(IFUNC_CPPFLAGS) -o $@ $(srcdir)/examples/mpi_embedded_ifunc.c
CLEANFILES += examples/mpi_embedded_image.c
EXTRA_DIST += examples/mpi_embedded_ifunc.c
