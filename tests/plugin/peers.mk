# Plugin tests between real processes (origin = the test, targets = peers).
TEST_IFUNC_IMAGES += tests/plugin/ifuncs/basic.xfn tests/plugin/ifuncs/unresolved.xfn \
	tests/plugin/ifuncs/probe.xfn tests/plugin/ifuncs/faults.xfn tests/plugin/ifuncs/forbidden.xfn \
	tests/plugin/ifuncs/runaway.xfn tests/plugin/ifuncs/libc_faults.xfn
EXTRA_DIST += tests/plugin/ifuncs/basic.c tests/plugin/ifuncs/unresolved.c \
	tests/plugin/ifuncs/probe.c tests/plugin/ifuncs/faults.c tests/plugin/ifuncs/forbidden.c \
	tests/plugin/ifuncs/runaway.c tests/plugin/ifuncs/libc_faults.c \
	tests/plugin/peer_state.h tests/plugin/compat/counter.c
tests/plugin/ifuncs/basic.xfn: tests/plugin/peer_state.h

# An ifunc library in the published API's form, built like its users would
# (without the C start files: targets refuse code that runs at load).
check_DATA += tests/plugin/compat/counter.so
CLEANFILES += tests/plugin/compat/counter.so
tests/plugin/compat/counter.so: tests/plugin/compat/counter.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && $(CC) -shared -fPIC -nostartfiles -O2 -o $@ $<

noinst_LTLIBRARIES += tests/plugin/libxrdma_testenv.la
tests_plugin_libxrdma_testenv_la_SOURCES = tests/plugin/ucx_env.cc tests/plugin/ucx_env.h \
	tests/plugin/cluster.cc tests/plugin/cluster.h tests/plugin/peer_state.h

check_PROGRAMS += tests/plugin/xrdma_test_peer tests/plugin/test_peers
tests_plugin_xrdma_test_peer_SOURCES = tests/plugin/peer_main.cc
tests_plugin_xrdma_test_peer_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS)
tests_plugin_xrdma_test_peer_LDFLAGS = -no-install
tests_plugin_test_peers_SOURCES = tests/plugin/test_peers.cc
tests_plugin_test_peers_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_plugin_test_peers_LDFLAGS = -no-install
TESTS += tests/plugin/test_peers
