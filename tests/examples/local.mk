# The MPI examples as tests: each of examples/mpi_pointer_chase,
# mpi_accumulate, mpi_filter, mpi_subarray_add, mpi_stream_reduce and the
# plugin-level xrdma_batch under mpirun with 3 ranks, over UCX shared
# memory and TCP, with small sizes; one .extest name per configuration
# (tests/examples/run-example reads it). The examples check their own
# answers. Include after tests/mpi/local.mk (it sets TEST_EXTENSIONS).
TEST_EXTENSIONS += .extest
EXTEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/examples/run-example
CONFIG_TESTS += \
	tests/examples/examples-mpi_pointer_chase-np3-shm.extest \
	tests/examples/examples-mpi_pointer_chase-np3-tcp.extest \
	tests/examples/examples-mpi_accumulate-np3-shm.extest \
	tests/examples/examples-mpi_accumulate-np3-tcp.extest \
	tests/examples/examples-mpi_filter-np3-shm.extest \
	tests/examples/examples-mpi_filter-np3-tcp.extest \
	tests/examples/examples-mpi_embedded-np3-shm.extest \
	tests/examples/examples-mpi_subarray_add-np3-shm.extest \
	tests/examples/examples-mpi_subarray_add-np3-tcp.extest \
	tests/examples/examples-mpi_stream_reduce-np3-shm.extest \
	tests/examples/examples-mpi_stream_reduce-np3-tcp.extest \
	tests/examples/examples-xrdma_batch-np3-shm.extest \
	tests/examples/examples-xrdma_batch-np3-tcp.extest
EXTRA_DIST += tests/examples/run-example
