# The Fortran example (examples/mpi_f08_xops.f90) as tests: 2 and 3 ranks,
# over UCX shared memory and TCP, run by tests/examples/run-example (it
# checks its own answers). Only when the Fortran module is built.
if XRDMA_F08
FORTRAN_EXAMPLE_TESTS = \
	tests/examples/examples-mpi_f08_xops-np2-shm.extest \
	tests/examples/examples-mpi_f08_xops-np3-shm.extest \
	tests/examples/examples-mpi_f08_xops-np2-tcp.extest \
	tests/examples/examples-mpi_f08_xops-np3-tcp.extest
TESTS += $(FORTRAN_EXAMPLE_TESTS)
CLEANFILES += $(FORTRAN_EXAMPLE_TESTS)
endif
if XRDMA_F08
TESTS += tests/fortran/test_install.sh
endif
EXTRA_DIST += tests/fortran/test_install.sh tests/fortran/own_mpi_calls.f90 tests/fortran/cmake/CMakeLists.txt
