AM_TESTS_ENVIRONMENT = \
	XRDMA_TEST_BUILDDIR='$(abs_top_builddir)'; export XRDMA_TEST_BUILDDIR; \
	XRDMA_TEST_SRCDIR='$(abs_top_srcdir)'; export XRDMA_TEST_SRCDIR; \
	XRDMA_MPI='$(XRDMA_MPI)'; export XRDMA_MPI; MPIRUN='$(MPIRUN)'; export MPIRUN;
GTEST_LIBS = -lgtest -lpthread
# Configuration tests: an empty file whose name says what to run (program,
# window kind, ranks, transport: tests/mpi/run-mpitest and the other
# fragments' LOG_COMPILERs read it). A fragment appends its names to
# CONFIG_TESTS; below, make creates them (only these: a new configuration
# is a new name in a list), make check runs them and make clean removes them.
CONFIG_TESTS =
include tests/plugin/unit.mk
include tests/plugin/info.mk
include tests/plugin/peers.mk
include tests/plugin/jit.mk
include tests/plugin/hostile.mk
include tests/fuzz/local.mk
include tests/hetero/local.mk
include tests/mpi/local.mk
include tests/multihost/local.mk
include tests/examples/local.mk
include tests/apps/local.mk
include tests/fortran/local.mk
include tests/python/local.mk
include tests/install/local.mk
include tests/compare-rma/local.mk
include tests/soak/local.mk
include tests/sanitize/local.mk
include tests/ompi_ext/local.mk
include tests/docs/local.mk
include tests/scripts/local.mk
include tests/scale/local.mk
include tests/benchmarks/local.mk
include tests/apps-hpcc/local.mk
TESTS += $(CONFIG_TESTS)
CLEANFILES += $(CONFIG_TESTS)
$(CONFIG_TESTS):
	@$(MKDIR_P) $(@D) && touch $@

# What depends on the MPI XRDMA is built for: the MPI layer's tests, the
# examples (C and Fortran), the Fortran and Python packages' tests,
# compare-rma and xrdma_info's report. `make check-mpi-layer` builds only
# what they need and runs only them: scripts/test's pass against MPICH
# (build-mpich/).
MPI_LAYER_TESTS = $(filter tests/mpi/% tests/examples/% tests/python/%,$(CONFIG_TESTS)) \
	$(FORTRAN_INSTALL_TESTS) $(PYTHON_LAYER_TESTS) tests/compare-rma/test_compare_rma.sh tests/plugin/test_info.sh
MPI_LAYER_BINS = tests/mpi/test_xops$(EXEEXT) tests/mpi/test_threads$(EXEEXT) \
	tests/mpi/test_progress_thread$(EXEEXT) tests/mpi/test_node_local$(EXEEXT) tests/mpi/test_datatypes$(EXEEXT) \
	tests/mpi/test_stream$(EXEEXT) tests/mpi/test_pmpix$(EXEEXT) tests/mpi/test_windows$(EXEEXT) \
	tests/mpi/test_window_setup$(EXEEXT) tests/mpi/test_log$(EXEEXT) tests/mpi/test_flush$(EXEEXT) \
	tests/mpi/test_bundle$(EXEEXT) tests/mpi/test_peer_death$(EXEEXT) tests/mpi/test_finalize_atexit$(EXEEXT) \
	tests/mpi/test_large_count$(EXEEXT) $(FORTRAN_LAYER_BINS)
# (check-TESTS builds every check program and data file first: told only
# these, it builds nothing else. The staged install among them, as in make
# check: an install test that installed for itself meanwhile would relink
# the libraries in .libs under the other tests: "file too short".)
check-mpi-layer: all $(MPI_LAYER_BINS) $(TEST_IFUNC_IMAGES)
	$(MAKE) $(AM_MAKEFLAGS) check-TESTS TESTS='$(MPI_LAYER_TESTS)' check_PROGRAMS='$(MPI_LAYER_BINS)' \
	  check_DATA='$(TEST_IFUNC_IMAGES) tests/install/staged.stamp'
.PHONY: check-mpi-layer

# What scripts/test's AddressSanitizer pass (build-asan/) runs: the suite
# without the MPI tests' bitcode variants (tests/mpi/bitcode/), which repeat
# the MPI layer's paths of the other variants with code the JIT compiled,
# and that code is not instrumented; test_jit and the hetero test keep the
# JIT path under ASan. The plain pass runs them all.
check-asan:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(filter-out tests/mpi/bitcode/%,$(TESTS))'
.PHONY: check-asan
