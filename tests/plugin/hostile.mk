# Hostile input at a target: damaged and malicious
# images, malformed invocations and frames; the target refuses each with
# its own status before any of the code runs, and keeps serving.
check_PROGRAMS += tests/plugin/test_hostile
TESTS += tests/plugin/test_hostile
tests_plugin_test_hostile_SOURCES = tests/plugin/test_hostile.cc
tests_plugin_test_hostile_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_hostile_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_plugin_test_hostile_LDFLAGS = -no-install

# Images with code that would run at load or unload (refused by targets).
TEST_IFUNC_IMAGES += tests/plugin/ifuncs/hostile_ctor.xfn tests/plugin/ifuncs/hostile_dtor.xfn \
	tests/plugin/ifuncs/hostile_init.xfn tests/plugin/ifuncs/hostile_ifunc.xfn \
	tests/plugin/ifuncs/hostile_interpose.xfn
EXTRA_DIST += tests/plugin/ifuncs/hostile_ctor.c tests/plugin/ifuncs/hostile_dtor.c \
	tests/plugin/ifuncs/hostile_init.c tests/plugin/ifuncs/hostile_ifunc.c \
	tests/plugin/ifuncs/hostile_interpose.c
# DT_INIT comes from the linker, not from the source.
tests/plugin/ifuncs/hostile_init.xfn: tests/plugin/ifuncs/hostile_init.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=native $(IFUNC_CPPFLAGS) -Wl,-init=at_init -o $@ $<

# The same code linked with other options must load as before (version
# definitions, DT_GNU_HASH only or DT_HASH only, immediate binding).
TEST_IFUNC_IMAGES += tests/plugin/ifuncs/linkopt_now.xfn tests/plugin/ifuncs/linkopt_verdef.xfn
EXTRA_DIST += tests/plugin/ifuncs/linkopt.map
tests/plugin/ifuncs/linkopt_now.xfn: tests/plugin/ifuncs/basic.c tests/plugin/peer_state.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=native $(IFUNC_CPPFLAGS) \
	  -Wl,-z,now -Wl,--hash-style=gnu -o $@ $<
tests/plugin/ifuncs/linkopt_verdef.xfn: tests/plugin/ifuncs/basic.c tests/plugin/peer_state.h tools/xrdma-cc$(EXEEXT) \
		$(srcdir)/tests/plugin/ifuncs/linkopt.map
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=native $(IFUNC_CPPFLAGS) \
	  -Wl,--version-script=$(srcdir)/tests/plugin/ifuncs/linkopt.map -Wl,--hash-style=sysv -o $@ $<
