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
clean-local: clean-hetero
clean-hetero:
	rm -rf tests/hetero/aarch64
.PHONY: clean-hetero
