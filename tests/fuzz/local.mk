# Fuzzing what other processes send (bad input must be refused): libFuzzer
# targets for the image parser, the ELF reader and the wire decoders; and
# the bitcode path through the compile helper, as a target runs it.
# And what an application passes to the public MPI API: api_load
# (MPIX_Ifunc_load_mem of arbitrary bytes) and api_xop (X-operations with
# arbitrary argument values), in a one-process MPI job (mpirun -n 1), with
# the MPI layer compiled in with instrumentation (tests/fuzz/harness_api.cc);
# without leak checks, as every MPI rank of a sanitizer build
# (tests/sanitize/local.mk: Open MPI, PMIx and UCX keep what they set up
# lazily, in frames LSan cannot always name), and with a longer limit per
# input (an X-op and its flush wait for MPI's and UCX's progress, which a
# loaded machine slows: 10 s once timed out an input that takes 18 ms), and
# without Open MPI's signal handlers (which end the process before libFuzzer
# writes the input that crashed).
#
#   make fuzz                      build the targets with clang, run each
#   make fuzz FUZZ_SECONDS=600     ... for 10 minutes each (default 60)
#   make fuzz FUZZ_TARGETS=elf     ... only some of them (image elf wire
#                                  bitcode api_load api_xop)
#
# The targets are built only by `make fuzz` (they need clang-14 and its
# libFuzzer runtime: tests/fuzz/install-fuzz-deps.sh installs them). Seeds
# are generated from the test images (xrdma-cc) and valid wire messages;
# the growing corpus stays in tests/fuzz/corpus/<target> of the build tree,
# crashing inputs land in tests/fuzz/artifacts/<target>. Every input that
# ever crashed is kept in tests/fuzz/regressions/<target> and replayed by
# `make check` (test_fuzz_regressions, normal compiler).

check_PROGRAMS += tests/fuzz/test_fuzz_regressions
TESTS += tests/fuzz/test_fuzz_regressions
tests_fuzz_test_fuzz_regressions_SOURCES = tests/fuzz/test_fuzz_regressions.cc \
	tests/fuzz/harness.cc tests/fuzz/harness.h tests/fuzz/harness_bitcode.cc
tests_fuzz_test_fuzz_regressions_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_fuzz_test_fuzz_regressions_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main
tests_fuzz_test_fuzz_regressions_LDFLAGS = -no-install
EXTRA_DIST += tests/fuzz/regressions tests/fuzz/install-fuzz-deps.sh \
	tests/fuzz/fuzz_image.cc tests/fuzz/fuzz_elf.cc tests/fuzz/fuzz_wire.cc tests/fuzz/fuzz_bitcode.cc \
	tests/fuzz/fuzz_api_load.cc tests/fuzz/fuzz_api_xop.cc tests/fuzz/api_ifunc.c

# The API targets' replayer (test_fuzz_regressions runs it under mpirun),
# with the functions their X-operations ship compiled in as a C array.
check_PROGRAMS += tests/fuzz/replay_api
tests_fuzz_replay_api_SOURCES = tests/fuzz/replay_api.cc tests/fuzz/harness_api.cc tests/fuzz/harness.h
nodist_tests_fuzz_replay_api_SOURCES = tests/fuzz/api_ifunc_image.c
tests_fuzz_replay_api_CPPFLAGS = $(MPI_TEST_CPPFLAGS) -DOMPI_SKIP_MPICXX=1
tests_fuzz_replay_api_LDADD = $(MPI_TEST_LDADD)
tests_fuzz_replay_api_LDFLAGS = -no-install
tests/fuzz/api_ifunc_image.c: $(srcdir)/tests/fuzz/api_ifunc.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=native $(IFUNC_CPPFLAGS) \
	  --c-array=fuzz_api_image -o $@ $(srcdir)/tests/fuzz/api_ifunc.c
CLEANFILES += tests/fuzz/api_ifunc_image.c

# The seed generator: normal compiler, built on demand only.
EXTRA_PROGRAMS += tests/fuzz/make_seeds
tests_fuzz_make_seeds_SOURCES = tests/fuzz/make_seeds.cc tests/fuzz/harness.h
tests_fuzz_make_seeds_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tests_fuzz_make_seeds_LDADD = libucx_ifunc.la
tests_fuzz_make_seeds_LDFLAGS = -no-install

FUZZ_SECONDS = 60
FUZZ_TARGETS = image elf wire bitcode api_load api_xop
FUZZ_CXX = clang++-14
FUZZ_CC = clang-14
FUZZ_FLAGS = -std=c++17 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_RUN_FLAGS = -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
# The decoders under test, compiled into each target with instrumentation.
FUZZ_DECODERS = $(srcdir)/ucx_plugin/image/image.cc $(srcdir)/ucx_plugin/image/sha256.cc \
	$(srcdir)/ucx_plugin/image/elf_reader.cc $(srcdir)/ucx_plugin/wire/wire.cc $(srcdir)/common/file.cc
FUZZ_DEPS = $(FUZZ_DECODERS) $(srcdir)/tests/fuzz/harness.cc $(srcdir)/tests/fuzz/harness.h \
	$(wildcard $(srcdir)/ucx_plugin/*/*.h) $(wildcard $(srcdir)/common/include/xrdma_common/*.h)
FUZZ_BUILD = $(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(PLUGIN_CPPFLAGS) -o $@ \
	$(srcdir)/tests/fuzz/harness.cc $(FUZZ_DECODERS) $(CRYPTO_LIBS)
CLEANFILES += tests/fuzz/fuzz_image tests/fuzz/fuzz_elf tests/fuzz/fuzz_wire tests/fuzz/fuzz_bitcode \
	tests/fuzz/seeds.stamp tests/fuzz/seed.map

tests/fuzz/fuzz_image: $(srcdir)/tests/fuzz/fuzz_image.cc $(FUZZ_DEPS)
	$(AM_V_GEN)$(FUZZ_BUILD) $(srcdir)/tests/fuzz/fuzz_image.cc
tests/fuzz/fuzz_elf: $(srcdir)/tests/fuzz/fuzz_elf.cc $(FUZZ_DEPS)
	$(AM_V_GEN)$(FUZZ_BUILD) $(srcdir)/tests/fuzz/fuzz_elf.cc
tests/fuzz/fuzz_wire: $(srcdir)/tests/fuzz/fuzz_wire.cc $(FUZZ_DEPS)
	$(AM_V_GEN)$(FUZZ_BUILD) $(srcdir)/tests/fuzz/fuzz_wire.cc
# The bitcode path is the plugin's own, built as the target's (libucx_ifunc,
# its JIT module, the compile helper): only the harness is instrumented, so
# libFuzzer's coverage counts its edges, not LLVM's. (No vptr checks: the
# objects it gets were made by code built without them.)
tests/fuzz/fuzz_bitcode: $(srcdir)/tests/fuzz/fuzz_bitcode.cc $(srcdir)/tests/fuzz/harness_bitcode.cc \
		$(srcdir)/tests/fuzz/harness.h libucx_ifunc.la libxrdma_jit.la xrdma-jit-helper$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) -fno-sanitize=vptr $(PLUGIN_CPPFLAGS) -o $@ \
	  $(srcdir)/tests/fuzz/fuzz_bitcode.cc $(srcdir)/tests/fuzz/harness_bitcode.cc \
	  -L.libs -lucx_ifunc -Wl,-rpath,$(abs_builddir)/.libs

# The API targets: the MPI layer's sources (both libraries') compiled with
# the fuzz flags into one archive, linked whole (its MPI_Init and MPI_Win_*
# interpose libmpi's, as libmpix_xrdma_core does), over the plugin as built.
FUZZ_CFLAGS = $(filter-out -std=%,$(FUZZ_FLAGS))
FUZZ_API_SRCS = $(filter %.cc %.c,$(libmpix_xrdma_core_la_SOURCES) $(libmpix_xrdma_la_SOURCES))
tests/fuzz/api_core.a: $(FUZZ_API_SRCS:%=$(srcdir)/%) tests/fuzz/api_ifunc_image.c
	$(AM_V_GEN)rm -rf $@ $@.objs && $(MKDIR_P) $@.objs && \
	for s in $(FUZZ_API_SRCS:%=$(srcdir)/%) tests/fuzz/api_ifunc_image.c; do \
	  o=$@.objs/`basename $$s`.o; \
	  case $$s in \
	    *.c) $(FUZZ_CC) $(FUZZ_CFLAGS) $(MPIX_XRDMA_CPPFLAGS) -c $$s -o $$o ;; \
	    *) $(FUZZ_CXX) $(FUZZ_FLAGS) $(MPIX_XRDMA_CPPFLAGS) -c $$s -o $$o ;; \
	  esac || exit 1; \
	done && ar rcs $@ $@.objs/*.o && rm -rf $@.objs
FUZZ_API_BUILD = $(MKDIR_P) $(@D) && $(FUZZ_CXX) $(FUZZ_FLAGS) $(MPI_TEST_CPPFLAGS) -DOMPI_SKIP_MPICXX=1 -o $@ $< \
	$(srcdir)/tests/fuzz/harness_api.cc -Wl,--whole-archive tests/fuzz/api_core.a -Wl,--no-whole-archive \
	-L.libs -lucx_ifunc -Wl,-rpath,$(abs_builddir)/.libs $(MPI_LIBS) -lopen-pal $(HWLOC_LIBS) $(UCX_LIBS)
FUZZ_API_DEPS = $(srcdir)/tests/fuzz/harness_api.cc $(srcdir)/tests/fuzz/harness.h tests/fuzz/api_core.a libucx_ifunc.la
tests/fuzz/fuzz_api_load: $(srcdir)/tests/fuzz/fuzz_api_load.cc $(FUZZ_API_DEPS)
	$(AM_V_GEN)$(FUZZ_API_BUILD)
tests/fuzz/fuzz_api_xop: $(srcdir)/tests/fuzz/fuzz_api_xop.cc $(FUZZ_API_DEPS)
	$(AM_V_GEN)$(FUZZ_API_BUILD)
CLEANFILES += tests/fuzz/api_core.a tests/fuzz/fuzz_api_load tests/fuzz/fuzz_api_xop

# Extra ELF seeds: seed_relocs.c (relative, TLS, GLOB_DAT and PLT
# relocations) linked with other linkers and options, so that the seeds reach
# PT_PHDR, PT_TLS, DT_RELR, DT_VERDEF, hash-table variants. A variant whose
# linker or option is missing here is left out.
FUZZ_ELF_VARIANTS = \
	default: \
	now:-Wl,-z,now,--hash-style=sysv \
	gnuhash:-Wl,--hash-style=gnu \
	relr:-Wl,-z,pack-relative-relocs,--version-script=tests/fuzz/seed.map \
	lld:-fuse-ld=lld \
	lldrelr:-fuse-ld=lld,-Wl,--pack-dyn-relocs=relr,--version-script=tests/fuzz/seed.map
EXTRA_DIST += tests/fuzz/seed_relocs.c

tests/fuzz/seeds.stamp: tests/fuzz/make_seeds$(EXEEXT) $(TEST_IFUNC_IMAGES) $(srcdir)/tests/fuzz/seed_relocs.c
	$(AM_V_GEN)rm -rf tests/fuzz/seeds && tests/fuzz/make_seeds$(EXEEXT) tests/fuzz/seeds $(TEST_IFUNC_IMAGES) && \
	printf 'V1 { global: pick; count_calls; __xrdma_entry_*; local: *; };\n' > tests/fuzz/seed.map && \
	for v in $(FUZZ_ELF_VARIANTS); do \
	  name=$${v%%:*}; flags=`echo "$${v#*:}" | sed 's/,-W/ -W/g'`; \
	  $(CLANG) -shared -nostartfiles -fPIC -fvisibility=hidden -O2 $(IFUNC_CPPFLAGS) $$flags \
	    -o tests/fuzz/seeds/elf/relocs-$$name.so $(srcdir)/tests/fuzz/seed_relocs.c 2>/dev/null || \
	    echo "  (no ELF seed relocs-$$name: $(CLANG) $$flags failed)"; \
	done && touch $@

fuzz-check-deps:
	@command -v $(FUZZ_CXX) >/dev/null && echo 'int main(){}' | $(FUZZ_CXX) -fsanitize=fuzzer-no-link,address -x c++ - -o /dev/null 2>/dev/null || { \
	  echo "make fuzz needs $(FUZZ_CXX) with its sanitizer runtimes: run $(srcdir)/tests/fuzz/install-fuzz-deps.sh"; exit 1; }

fuzz: fuzz-check-deps
	@$(MAKE) $(AM_MAKEFLAGS) tests/fuzz/seeds.stamp $(FUZZ_TARGETS:%=tests/fuzz/fuzz_%)
	@for t in $(FUZZ_TARGETS); do \
	  $(MKDIR_P) tests/fuzz/corpus/$$t tests/fuzz/artifacts/$$t || exit 1; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s (crashes go to tests/fuzz/artifacts/$$t/)"; \
	  reg=$(srcdir)/tests/fuzz/regressions/$$t; test -d $$reg || reg=; \
	  seeds=tests/fuzz/seeds/$$t; run=; flags=; \
	  case $$t in \
	    api_*) run="mpirun $(XRDMA_MPIRUN_FLAGS) -x ASAN_OPTIONS=detect_leaks=0 -x OMPI_MCA_opal_signal= -n 1"; \
	      flags="-detect_leaks=0 -timeout=60"; seeds=;; \
	  esac; \
	  test $$t = api_load && seeds=tests/fuzz/seeds/image; \
	  $$run tests/fuzz/fuzz_$$t $(FUZZ_RUN_FLAGS) $$flags -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=tests/fuzz/artifacts/$$t/ tests/fuzz/corpus/$$t $$seeds \
	    $$reg || exit 1; \
	done
.PHONY: fuzz fuzz-check-deps
