# Sanitizer builds (configure --enable-asan / --enable-ubsan / --enable-tsan;
# tests/sanitize/README.md): the options every test process runs with. They
# act only on programs built with a sanitizer; mpirun hands them to its local
# ranks with the rest of its environment. Options already set in the
# environment come last, and win.
#
# LeakSanitizer is on for the GoogleTest programs (run-test, the
# LOG_COMPILER of the tests without an extension, turns it on for programs,
# not scripts) and the peer processes they start, with lsan.supp. It is off
# everywhere else, for MPI ranks in particular:
# Open MPI leaks at exit from MCA components it has already unloaded, whose
# frames LSan can neither name nor match to a suppression. The MPI layer's
# leaks are checked by the soak's valgrind runs (tests/soak) instead.
AM_TESTS_ENVIRONMENT += \
	XRDMA_TEST_SANITIZERS='$(XRDMA_SANITIZERS)'; export XRDMA_TEST_SANITIZERS; \
	ASAN_OPTIONS="$(XRDMA_ASAN_OPTIONS)$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}"; export ASAN_OPTIONS; \
	LSAN_OPTIONS="$(XRDMA_LSAN_OPTIONS)$${LSAN_OPTIONS:+:$$LSAN_OPTIONS}"; export LSAN_OPTIONS; \
	UBSAN_OPTIONS="$(XRDMA_UBSAN_OPTIONS)$${UBSAN_OPTIONS:+:$$UBSAN_OPTIONS}"; export UBSAN_OPTIONS; \
	TSAN_OPTIONS="$(XRDMA_TSAN_OPTIONS)$${TSAN_OPTIONS:+:$$TSAN_OPTIONS}"; export TSAN_OPTIONS;
XRDMA_ASAN_OPTIONS = detect_leaks=0
XRDMA_LSAN_OPTIONS = suppressions=$(abs_top_srcdir)/tests/sanitize/lsan.supp:print_suppressions=0
XRDMA_UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
XRDMA_TSAN_OPTIONS = second_deadlock_stack=1
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/sanitize/run-test
EXTRA_DIST += tests/sanitize/lsan.supp tests/sanitize/README.md tests/sanitize/run-test
