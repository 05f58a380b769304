# Several hosts on one machine: 3 network namespaces joined by veths, a rank
# in each (run-multihost builds them, netns-agent is mpirun's launch agent).
# The MPI test suite over UCX TCP across them (MPI_Win_allocate_shared needs
# one node: not here), then a data link that goes down while X-ops are
# pending on it; and 2 hosts x 2 ranks: the pointer chase runs locally
# within a host and crosses hosts as messages (node-local execution). Needs
# root; skipped (77) where namespaces cannot be made.
# About 30 s in all; README.md has what the link-down test observes.
check_PROGRAMS += tests/multihost/test_link_down
tests_multihost_test_link_down_SOURCES = tests/multihost/test_link_down.c tests/mpi/mpitest.h
tests_multihost_test_link_down_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_multihost_test_link_down_LDADD = $(MPI_TEST_LDADD)
tests_multihost_test_link_down_LDFLAGS = -no-install
EXTRA_DIST += tests/multihost/run-multihost tests/multihost/netns-agent tests/multihost/README.md

TEST_EXTENSIONS += .mhtest
MHTEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/multihost/run-multihost
CONFIG_TESTS += \
	tests/multihost/xops-create.mhtest \
	tests/multihost/xops-allocate.mhtest \
	tests/multihost/xops-dynamic.mhtest \
	tests/multihost/chase.mhtest \
	tests/multihost/link_down.mhtest
