# Plugin tests between real processes (origin = the test, targets = peers).
TEST_IFUNC_IMAGES += tests/plugin/ifuncs/basic.xfn tests/plugin/ifuncs/unresolved.xfn \
	tests/plugin/ifuncs/probe.xfn tests/plugin/ifuncs/faults.xfn tests/plugin/ifuncs/forbidden.xfn \
	tests/plugin/ifuncs/runaway.xfn tests/plugin/ifuncs/libc_faults.xfn tests/plugin/ifuncs/order.xfn
EXTRA_DIST += tests/plugin/ifuncs/basic.c tests/plugin/ifuncs/unresolved.c \
	tests/plugin/ifuncs/probe.c tests/plugin/ifuncs/faults.c tests/plugin/ifuncs/forbidden.c \
	tests/plugin/ifuncs/runaway.c tests/plugin/ifuncs/libc_faults.c tests/plugin/ifuncs/order.c \
	tests/plugin/peer_state.h tests/plugin/compat/counter.c
tests/plugin/ifuncs/basic.xfn tests/plugin/ifuncs/order.xfn: tests/plugin/peer_state.h
# order.c once more, with one entry more: another image with the same entries.
TEST_IFUNC_IMAGES += tests/plugin/ifuncs/order_b.xfn
tests/plugin/ifuncs/order_b.xfn: tests/plugin/ifuncs/order.c tests/plugin/peer_state.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc $(IFUNC_CPPFLAGS) -I$(<D) -DORDER_IMAGE_B -o $@ $<

# An ifunc library in the published API's form, built without the C start
# files (still accepted; the libraries below have them).
check_DATA += tests/plugin/compat/counter.so
CLEANFILES += tests/plugin/compat/counter.so
tests/plugin/compat/counter.so: tests/plugin/compat/counter.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && $(CC) -shared -fPIC -nostartfiles -O2 -o $@ $<

noinst_LTLIBRARIES += tests/plugin/libxrdma_testenv.la
tests_plugin_libxrdma_testenv_la_SOURCES = tests/plugin/ucx_env.cc tests/plugin/ucx_env.h \
	tests/plugin/cluster.cc tests/plugin/cluster.h tests/plugin/chase.h tests/plugin/peer_state.h

check_PROGRAMS += tests/plugin/xrdma_test_peer tests/plugin/test_peers
tests_plugin_xrdma_test_peer_SOURCES = tests/plugin/peer_main.cc
tests_plugin_xrdma_test_peer_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_xrdma_test_peer_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS)
tests_plugin_xrdma_test_peer_LDFLAGS = -no-install
tests_plugin_test_peers_SOURCES = tests/plugin/test_peers.cc
tests_plugin_test_peers_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_peers_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_plugin_test_peers_LDFLAGS = -no-install
TESTS += tests/plugin/test_peers

# The published ifunc API as its users build and run it: ifunc
# libraries built like that API's makefiles build them, with gcc (and a
# search path) and with clang, start files included; variants with a
# constructor of the author's own, with a payload shrunk by
# <name>_payload_init and with a main that faults on request; bitcode named with LLVM's -unknown- triples and a
# .deps list naming a linker script and a loaded library.
COMPAT_USER_LIBS = tests/plugin/compat/gcc/counter.so tests/plugin/compat/gcc/bigsum.so \
	tests/plugin/compat/gcc/ping.so tests/plugin/compat/gcc/pong.so \
	tests/plugin/compat/clang/counter.so tests/plugin/compat/ctor/counter.so \
	tests/plugin/compat/shrink/counter.so tests/plugin/compat/fault/counter.so \
	tests/plugin/compat/bcu/counter.x86_64-unknown-linux-gnu.bc \
	tests/plugin/compat/bcu/counter.aarch64-unknown-linux-gnu.bc tests/plugin/compat/bcu/counter.deps
check_DATA += $(COMPAT_USER_LIBS)
CLEANFILES += $(COMPAT_USER_LIBS)
EXTRA_DIST += tests/plugin/compat/bigsum.c tests/plugin/compat/ping.c tests/plugin/compat/pong.c \
	tests/plugin/compat/copy_payload.h
COMPAT_USER_CFLAGS = -shared -fPIC -O2 -I$(top_srcdir)/ucx_plugin/include $(UCX_CFLAGS)
tests/plugin/compat/gcc/%.so: tests/plugin/compat/%.c tests/plugin/peer_state.h tests/plugin/compat/copy_payload.h $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && gcc $(COMPAT_USER_CFLAGS) -Wl,-rpath,/nonexistent/xrdma-rpath -o $@ $<
tests/plugin/compat/clang/%.so: tests/plugin/compat/%.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && $(CLANG) $(COMPAT_USER_CFLAGS) -o $@ $<
tests/plugin/compat/ctor/counter.so: tests/plugin/compat/counter.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && gcc $(COMPAT_USER_CFLAGS) -DCOUNTER_CTOR -o $@ $<
tests/plugin/compat/shrink/counter.so: tests/plugin/compat/counter.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && gcc $(COMPAT_USER_CFLAGS) -DCOUNTER_SLACK=1000 -o $@ $<
tests/plugin/compat/fault/counter.so: tests/plugin/compat/counter.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_CC)$(MKDIR_P) $(@D) && gcc $(COMPAT_USER_CFLAGS) -DCOUNTER_FAULT -o $@ $<
tests/plugin/compat/bcu/counter.%.bc: tests/plugin/compat/counter.c
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(CLANG) -c -emit-llvm -O2 -fPIC -target $* -o $@ $<
tests/plugin/compat/bcu/counter.deps: $(srcdir)/tests/plugin/peers.mk
	$(AM_V_GEN)$(MKDIR_P) $(@D) && printf '# a linker script, then a library every process has\nlibc.so\nlibc.so.6\n' > $@

# Bitcode with the library list the published API's makefile writes: every
# shared library or script `gcc -shared -Wl,--trace` opens for the ifunc, by
# base name (libgcc_s.so, a linker script in GCC's own directory, among
# them); and with a list naming a library no machine has, for an ifunc that
# needs nothing of it (counter) and for one that calls a function only such
# a library could define (absent; the origin's payload functions from
# absent.so).
COMPAT_DEPS = tests/plugin/compat/bcdeps/counter.x86_64-unknown-linux-gnu.bc \
	tests/plugin/compat/bcdeps/counter.aarch64-unknown-linux-gnu.bc tests/plugin/compat/bcdeps/counter.deps \
	tests/plugin/compat/bcmiss/counter.x86_64-unknown-linux-gnu.bc tests/plugin/compat/bcmiss/counter.deps \
	tests/plugin/compat/bcmiss/absent.x86_64-unknown-linux-gnu.bc tests/plugin/compat/bcmiss/absent.so \
	tests/plugin/compat/bcmiss/absent.deps
check_DATA += $(COMPAT_DEPS)
CLEANFILES += $(COMPAT_DEPS)
EXTRA_DIST += tests/plugin/compat/absent.c
tests/plugin/compat/bcdeps/counter.%.bc: tests/plugin/compat/counter.c
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(CLANG) -c -emit-llvm -O2 -fPIC -target $* -o $@ $<
tests/plugin/compat/bcdeps/counter.deps: tests/plugin/compat/counter.c $(srcdir)/tests/plugin/peers.mk
	$(AM_V_GEN)$(MKDIR_P) $(@D) && gcc -shared -fPIC -O2 -o /dev/null -Wl,--trace $< | grep '\.so' | \
	  sed -e 's/.*(//' -e 's/)$$//' -e 's|.*/||' | sort -u > $@
tests/plugin/compat/bcmiss/counter.%.bc: tests/plugin/compat/counter.c
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(CLANG) -c -emit-llvm -O2 -fPIC -target $* -o $@ $<
tests/plugin/compat/bcmiss/absent.%.bc: tests/plugin/compat/absent.c tests/plugin/compat/copy_payload.h
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(CLANG) -c -emit-llvm -O2 -fPIC -target $* -o $@ $<
tests/plugin/compat/bcmiss/absent.so: tests/plugin/compat/absent.c tests/plugin/compat/copy_payload.h
	$(AM_V_CC)$(MKDIR_P) $(@D) && gcc $(COMPAT_USER_CFLAGS) -DABSENT_PAYLOAD_ONLY -o $@ $<
tests/plugin/compat/bcmiss/%.deps: $(srcdir)/tests/plugin/peers.mk
	$(AM_V_GEN)$(MKDIR_P) $(@D) && printf '# found nowhere\nlibxrdma-no-such-library.so.1\n' > $@

check_PROGRAMS += tests/plugin/test_compat
tests_plugin_test_compat_SOURCES = tests/plugin/test_compat.cc
tests_plugin_test_compat_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_compat_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_plugin_test_compat_LDFLAGS = -no-install
TESTS += tests/plugin/test_compat
