# The bitcode path (LLVM JIT at the target) between real processes.
check_PROGRAMS += tests/plugin/test_jit
TESTS += tests/plugin/test_jit
tests_plugin_test_jit_SOURCES = tests/plugin/test_jit.cc
tests_plugin_test_jit_LDADD = tests/plugin/libxrdma_testenv.la libucx_ifunc.la $(UCX_LIBS) $(GTEST_LIBS) -lgtest_main
tests_plugin_test_jit_LDFLAGS = -no-install

# Bitcode that fails the IR verifier (llvm-as would refuse to write it).
check_DATA += tests/plugin/ifuncs/invalid_ir.bc
CLEANFILES += tests/plugin/ifuncs/invalid_ir.bc
EXTRA_DIST += tests/plugin/ifuncs/invalid_ir.ll
tests/plugin/ifuncs/invalid_ir.bc: tests/plugin/ifuncs/invalid_ir.ll
	$(AM_V_GEN)$(MKDIR_P) $(@D) && `$(LLVM_CONFIG) --bindir`/llvm-as --disable-verify -o $@ $<
