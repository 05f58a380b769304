AM_TESTS_ENVIRONMENT = \
	XRDMA_TEST_BUILDDIR='$(abs_top_builddir)'; export XRDMA_TEST_BUILDDIR; \
	XRDMA_TEST_SRCDIR='$(abs_top_srcdir)'; export XRDMA_TEST_SRCDIR;
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
include tests/scale/local.mk
include tests/benchmarks/local.mk
include tests/apps-hpcc/local.mk
TESTS += $(CONFIG_TESTS)
CLEANFILES += $(CONFIG_TESTS)
$(CONFIG_TESTS):
	@$(MKDIR_P) $(@D) && touch $@
