# HPC Challenge RandomAccess (apps/hpcc) at a small size: every variant,
# 2 and 3 ranks (a power of two and not: HPCC's two table layouts), UCX
# over shared memory and TCP, XRDMA's functions also sent to their target
# over shared memory (XRDMA_EXEC=target); HPCC's verification must find no
# error in any. apps/hpcc/check-ready fetches and builds it first, or
# records why the source package cannot be fetched (the tests then skip).
check_DATA += apps/hpcc/check-ready
apps/hpcc/check-ready:
	@rm -f apps/hpcc/unfetchable; \
	if $(MAKE) $(AM_MAKEFLAGS) apps-hpcc; then echo ready >$@; \
	elif [ -f apps/hpcc/unfetchable ]; then { printf 'skip: '; cat apps/hpcc/unfetchable; } >$@; \
	else exit 1; fi
.PHONY: apps/hpcc/check-ready
CLEANFILES += apps/hpcc/check-ready

TEST_EXTENSIONS += .hpcctest
HPCCTEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/apps-hpcc/run-hpcc-test
CONFIG_TESTS += \
	tests/apps-hpcc/gups-np2-shm.hpcctest \
	tests/apps-hpcc/gups-np2-tcp.hpcctest \
	tests/apps-hpcc/gups-np3-shm.hpcctest \
	tests/apps-hpcc/gups-np3-tcp.hpcctest \
	tests/apps-hpcc/gups-target-np3-shm.hpcctest
EXTRA_DIST += tests/apps-hpcc/run-hpcc-test
