# The Fortran example (examples/mpi_f08_xops.f90) as tests: 2 and 3 ranks,
# over UCX shared memory and TCP, run by tests/examples/run-example (it
# checks its own answers). Only when the Fortran module is built.
if XRDMA_F08
CONFIG_TESTS += \
	tests/examples/examples-mpi_f08_xops-np2-shm.extest \
	tests/examples/examples-mpi_f08_xops-np3-shm.extest \
	tests/examples/examples-mpi_f08_xops-np2-tcp.extest \
	tests/examples/examples-mpi_f08_xops-np3-tcp.extest
endif
if XRDMA_F08
FORTRAN_INSTALL_TESTS = tests/fortran/test_install.sh tests/fortran/test_messages.sh
TESTS += $(FORTRAN_INSTALL_TESTS)
# The module's own refusals (strided buffers, args past the C API's int)
# say what is wrong.
check_PROGRAMS += tests/fortran/f08_messages
FORTRAN_LAYER_BINS = tests/fortran/f08_messages$(EXEEXT)
tests_fortran_f08_messages_SOURCES = tests/fortran/f08_messages.f90
tests_fortran_f08_messages_FCFLAGS = -I fortran $(MPI_FCFLAGS)
tests_fortran_f08_messages_LDADD = fortran/link_f08.o libmpix_xrdma_f08.la libmpix_xrdma_core.la libmpix_xrdma.la \
	$(MPI_FLIBS)
tests_fortran_f08_messages_LDFLAGS = -no-install
$(tests_fortran_f08_messages_OBJECTS): fortran/mpix_xrdma.mod
EXTRA_tests_fortran_f08_messages_DEPENDENCIES = examples/mpi_f08_ifunc.xfn
# MPI-4's large-count window calls from Fortran make XRDMA windows (MPICH's
# mpi_f08 only: Open MPI 4.1's has no large-count forms).
if XRDMA_MPI_MPICH
FORTRAN_INSTALL_TESTS += tests/fortran/test_large_count.sh
check_PROGRAMS += tests/fortran/f08_large_count
FORTRAN_LAYER_BINS += tests/fortran/f08_large_count$(EXEEXT)
tests_fortran_f08_large_count_SOURCES = tests/fortran/f08_large_count.f90
tests_fortran_f08_large_count_FCFLAGS = -I fortran $(MPI_FCFLAGS)
tests_fortran_f08_large_count_LDADD = $(tests_fortran_f08_messages_LDADD)
tests_fortran_f08_large_count_LDFLAGS = -no-install
$(tests_fortran_f08_large_count_OBJECTS): fortran/mpix_xrdma.mod
EXTRA_tests_fortran_f08_large_count_DEPENDENCIES = examples/mpi_f08_ifunc.xfn
endif
endif
EXTRA_DIST += tests/fortran/test_install.sh tests/fortran/own_mpi_calls.f90 tests/fortran/cmake/CMakeLists.txt \
	tests/fortran/test_messages.sh tests/fortran/test_large_count.sh tests/fortran/f08_large_count.f90
