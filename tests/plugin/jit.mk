# The bitcode path (LLVM JIT at the target) between real processes.
check_PROGRAMS += tests/plugin/test_jit
TESTS += tests/plugin/test_jit
tests_plugin_test_jit_SOURCES = tests/plugin/test_jit.cc
tests_plugin_test_jit_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_plugin_test_jit_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_plugin_test_jit_LDFLAGS = -no-install
# A compile helper the test holds at a gate (X-ops during a compile).
check_PROGRAMS += tests/plugin/gated_jit_helper
tests_plugin_gated_jit_helper_SOURCES = tests/plugin/gated_jit_helper.cc

# Bitcode that fails the IR verifier (llvm-as would refuse to write it), and
# valid bitcode on which LLVM's code generation aborts.
check_DATA += tests/plugin/ifuncs/invalid_ir.bc tests/plugin/ifuncs/llvm_abort.bc
CLEANFILES += tests/plugin/ifuncs/invalid_ir.bc tests/plugin/ifuncs/llvm_abort.bc
EXTRA_DIST += tests/plugin/ifuncs/invalid_ir.ll tests/plugin/ifuncs/llvm_abort.ll
tests/plugin/ifuncs/%.bc: tests/plugin/ifuncs/%.ll
	$(AM_V_GEN)$(MKDIR_P) $(@D) && `$(LLVM_CONFIG) --bindir`/llvm-as --disable-verify -o $@ $<

# The published API with llvm_bc = 1: <name>.<triple>.bc files (and a .deps
# list) in a directory without <name>.so, so the origin compiles the payload
# functions from bitcode too.
COMPAT_BC = tests/plugin/compat/bc/counter.x86_64-linux-gnu.bc tests/plugin/compat/bc/counter.aarch64-linux-gnu.bc \
	tests/plugin/compat/bc/hwver.x86_64-linux-gnu.bc tests/plugin/compat/bc/hwver.aarch64-linux-gnu.bc \
	tests/plugin/compat/bc/hwver.deps
check_DATA += $(COMPAT_BC)
CLEANFILES += $(COMPAT_BC)
EXTRA_DIST += tests/plugin/compat/hwver.c tests/plugin/compat/hwver.deps
tests/plugin/compat/bc/counter.%.bc: tests/plugin/compat/counter.c
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(CLANG) -c -emit-llvm -O2 -fPIC -target $* -o $@ $<
tests/plugin/compat/bc/hwver.%.bc: tests/plugin/compat/hwver.c
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(CLANG) -c -emit-llvm -O2 -fPIC -target $* -o $@ $<
tests/plugin/compat/bc/hwver.deps: tests/plugin/compat/hwver.deps
	$(AM_V_GEN)$(MKDIR_P) $(@D) && cp $< $@
