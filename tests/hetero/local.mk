# Heterogeneous demonstration: x86-64 origin, aarch64 peer under qemu.
TEST_IFUNC_IMAGES += tests/hetero/ifuncs/hetero.xfn
EXTRA_DIST += tests/hetero/ifuncs/hetero.c tests/hetero/test_aarch64.sh \
	tests/hetero/setup-aarch64-sysroot.sh tests/hetero/build-aarch64-peer.sh
check_PROGRAMS += tests/hetero/test_hetero
tests_hetero_test_hetero_SOURCES = tests/hetero/test_hetero.cc
tests_hetero_test_hetero_CPPFLAGS = $(PLUGIN_CPPFLAGS) -I$(top_srcdir)/tests/plugin
tests_hetero_test_hetero_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_hetero_test_hetero_LDFLAGS = -no-install
TESTS += tests/hetero/test_aarch64.sh
# The one test that installs packages (setup-aarch64-sysroot.sh: the aarch64
# cross compilers, whose dependencies hold the aarch64 C++ headers) runs after
# xrdma-cc's tests, so that those build C++ functions for every default target
# with what scripts/install-deps installed, whatever the order of a run. (The
# target through a variable: a rule automake sees for a test's log replaces
# the one it writes, recipe and all.)
HETERO_TEST_LOG = tests/hetero/test_aarch64.sh.log
$(HETERO_TEST_LOG): tests/plugin/test_xrdma_cc.log
clean-local: clean-hetero
clean-hetero:
	rm -rf tests/hetero/aarch64
.PHONY: clean-hetero
