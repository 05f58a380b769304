# Soak (tests/soak/run-soak, one .soaktest name per configuration): 3 ranks,
# each sending MPIX_Xput (user-defined accumulate) and MPIX_Xinvoke (bump) to
# every other rank, a million operations in total, over UCX shared memory and
# over TCP; test_soak checks the exact totals and that memory stayed flat
# (VmRSS sampled during the run). The memcheck runs repeat a short soak with
# every rank under valgrind --leak-check=full (tests/soak/valgrind.supp holds
# back Open MPI/UCX/hwloc's own allocations). `make soak` runs only these.
# Include after tests/mpi/local.mk (TEST_EXTENSIONS, MPI_TEST_*).
check_PROGRAMS += tests/soak/test_soak
tests_soak_test_soak_SOURCES = tests/soak/test_soak.c tests/mpi/mpitest.h
tests_soak_test_soak_CPPFLAGS = $(MPI_TEST_CPPFLAGS) -I$(top_srcdir)/tests/mpi
tests_soak_test_soak_LDADD = $(MPI_TEST_LDADD)
tests_soak_test_soak_LDFLAGS = -no-install

TEST_EXTENSIONS += .soaktest
SOAKTEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/soak/run-soak
SOAK_TESTS = \
	tests/soak/soak-1M-np3-shm.soaktest \
	tests/soak/soak-1M-np3-tcp.soaktest \
	tests/soak/memcheck-3k-np3-shm.soaktest \
	tests/soak/memcheck-3k-np3-tcp.soaktest
CONFIG_TESTS += $(SOAK_TESTS)
EXTRA_DIST += tests/soak/run-soak tests/soak/valgrind.supp

soak:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(SOAK_TESTS)'
clean-local: clean-soak
clean-soak:
	rm -rf tests/soak/*.valgrind
.PHONY: soak clean-soak
