# MPI tests: each test program under mpirun with 2, 3 and 4 ranks, over UCX
# shared memory and TCP; one .mpitest name per configuration (run-mpitest
# reads it). Each configuration counts as one test.
MPI_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/c $(MPI_CPPFLAGS)
MPI_TEST_LDADD = libmpix_xrdma_core.la libmpix_xrdma.la $(MPI_LIBS) -lpthread
check_PROGRAMS += tests/mpi/test_xops tests/mpi/test_threads tests/mpi/test_progress_thread tests/mpi/test_node_local
tests_mpi_test_xops_SOURCES = tests/mpi/test_xops.c tests/mpi/mpitest.h
tests_mpi_test_xops_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_xops_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_xops_LDFLAGS = -no-install
tests_mpi_test_threads_SOURCES = tests/mpi/test_threads.c tests/mpi/mpitest.h
tests_mpi_test_threads_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_threads_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_threads_LDFLAGS = -no-install
tests_mpi_test_progress_thread_SOURCES = tests/mpi/test_progress_thread.c tests/mpi/mpitest.h
tests_mpi_test_progress_thread_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_progress_thread_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_progress_thread_LDFLAGS = -no-install

check_PROGRAMS += tests/mpi/test_datatypes
tests_mpi_test_datatypes_SOURCES = tests/mpi/test_datatypes.c tests/mpi/mpitest.h
tests_mpi_test_datatypes_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_datatypes_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_datatypes_LDFLAGS = -no-install
TEST_IFUNC_IMAGES += tests/mpi/ifuncs/datatypes.xfn tests/mpi/ifuncs/datatypes_plain.xfn
EXTRA_DIST += tests/mpi/ifuncs/datatypes.c tests/mpi/ifuncs/datatypes_plain.c

# Streaming X-operations (XRDMA_STREAM): handlers per piece, fetched data.
check_PROGRAMS += tests/mpi/test_stream
tests_mpi_test_stream_SOURCES = tests/mpi/test_stream.c tests/mpi/mpitest.h
tests_mpi_test_stream_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_stream_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_stream_LDFLAGS = -no-install
TEST_IFUNC_IMAGES += tests/mpi/ifuncs/stream.xfn tests/mpi/ifuncs/stream_crash.xfn
EXTRA_DIST += tests/mpi/ifuncs/stream.c tests/mpi/ifuncs/stream_crash.c
CONFIG_TESTS += \
	tests/mpi/stream-create-np2-tcp.mpitest \
	tests/mpi/stream-allocate-np3-shm.mpitest \
	tests/mpi/stream-shared-np3-tcp.mpitest \
	tests/mpi/stream-dynamic-np2-shm.mpitest \
	tests/mpi/target/stream-allocate-np3-shm.mpitest \
	tests/mpi/target/stream-create-np2-shm.mpitest \
	tests/mpi/bitcode/stream-allocate-np2-tcp.mpitest

# The per-target lock of node-local execution, between processes (no MPI).
check_PROGRAMS += tests/mpi/test_target_lock
TESTS += tests/mpi/test_target_lock
tests_mpi_test_target_lock_SOURCES = tests/mpi/test_target_lock.cc ompi_ext/xrdma/core/target_lock.cc
tests_mpi_test_target_lock_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/core
tests_mpi_test_target_lock_LDADD = libucx_ifunc.la $(GTEST_LIBS) -lgtest_main -lpthread
tests_mpi_test_target_lock_LDFLAGS = -no-install

tests_mpi_test_node_local_SOURCES = tests/mpi/test_node_local.c tests/mpi/mpitest.h
tests_mpi_test_node_local_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_node_local_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_node_local_LDFLAGS = -no-install

tests/mpi/ifuncs/node_local_movable.xfn tests/mpi/ifuncs/node_local_pinned.xfn: \
	$(srcdir)/tests/mpi/ifuncs/node_local_ops.h
TEST_IFUNC_IMAGES += tests/mpi/ifuncs/mpi_ops.xfn tests/mpi/ifuncs/node_local_movable.xfn \
	tests/mpi/ifuncs/node_local_pinned.xfn tests/mpi/ifuncs/node_local_crash.xfn
EXTRA_DIST += tests/mpi/ifuncs/mpi_ops.c tests/mpi/ifuncs/node_local_movable.c \
	tests/mpi/ifuncs/node_local_pinned.c tests/mpi/ifuncs/node_local_crash.c tests/mpi/ifuncs/node_local_ops.h tests/mpi/ifuncs/allowlist.txt tests/mpi/run-mpitest

TEST_EXTENSIONS = .mpitest
MPITEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/mpi/run-mpitest
CONFIG_TESTS += \
	tests/mpi/datatypes-create-np2-shm.mpitest \
	tests/mpi/datatypes-allocate-np3-tcp.mpitest \
	tests/mpi/datatypes-shared-np3-shm.mpitest \
	tests/mpi/datatypes-dynamic-np2-tcp.mpitest \
	tests/mpi/datatypes-allocate-np2-shm.mpitest \
	tests/mpi/datatypes-create-np2-tcp.mpitest \
	tests/mpi/datatypes-dynamic-np2-shm.mpitest \
	tests/mpi/datatypes-shared-np2-tcp.mpitest \
	tests/mpi/xops-create-np2-shm.mpitest \
	tests/mpi/xops-create-np2-tcp.mpitest \
	tests/mpi/xops-create-np3-shm.mpitest \
	tests/mpi/xops-create-np3-tcp.mpitest \
	tests/mpi/xops-create-np4-shm.mpitest \
	tests/mpi/xops-create-np4-tcp.mpitest \
	tests/mpi/xops-allocate-np2-shm.mpitest \
	tests/mpi/xops-allocate-np2-tcp.mpitest \
	tests/mpi/xops-allocate-np3-shm.mpitest \
	tests/mpi/xops-allocate-np3-tcp.mpitest \
	tests/mpi/xops-allocate-np4-shm.mpitest \
	tests/mpi/xops-allocate-np4-tcp.mpitest \
	tests/mpi/xops-shared-np2-shm.mpitest \
	tests/mpi/xops-shared-np2-tcp.mpitest \
	tests/mpi/xops-shared-np3-shm.mpitest \
	tests/mpi/xops-shared-np3-tcp.mpitest \
	tests/mpi/xops-shared-np4-shm.mpitest \
	tests/mpi/xops-shared-np4-tcp.mpitest \
	tests/mpi/xops-dynamic-np2-shm.mpitest \
	tests/mpi/xops-dynamic-np2-tcp.mpitest \
	tests/mpi/xops-dynamic-np3-shm.mpitest \
	tests/mpi/xops-dynamic-np3-tcp.mpitest \
	tests/mpi/xops-dynamic-np4-shm.mpitest \
	tests/mpi/xops-dynamic-np4-tcp.mpitest \
	tests/mpi/threads-np2-shm.mpitest \
	tests/mpi/threads-np2-tcp.mpitest \
	tests/mpi/threads-np4-shm.mpitest \
	tests/mpi/threads-np4-tcp.mpitest \
	tests/mpi/progress_thread-np2-shm.mpitest \
	tests/mpi/progress_thread-np2-tcp.mpitest \
	tests/mpi/node_local-allocate-np2-shm.mpitest \
	tests/mpi/node_local-allocate-np3-shm.mpitest \
	tests/mpi/node_local-allocate-np4-shm.mpitest \
	tests/mpi/node_local-allocate-np3-tcp.mpitest \
	tests/mpi/node_local-shared-np3-shm.mpitest \
	tests/mpi/node_local-shared-np3-tcp.mpitest

# Every configuration again with XRDMA_CODE=bitcode (run-mpitest sees the
# bitcode/ directory): the MPI operations through the JIT path.
# (Listed one by one: automake drops substitution references in TESTS.)
CONFIG_TESTS += \
	tests/mpi/bitcode/datatypes-create-np2-shm.mpitest \
	tests/mpi/bitcode/datatypes-allocate-np2-shm.mpitest \
	tests/mpi/bitcode/datatypes-dynamic-np2-tcp.mpitest \
	tests/mpi/bitcode/xops-create-np2-shm.mpitest \
	tests/mpi/bitcode/xops-create-np2-tcp.mpitest \
	tests/mpi/bitcode/xops-create-np3-shm.mpitest \
	tests/mpi/bitcode/xops-create-np3-tcp.mpitest \
	tests/mpi/bitcode/xops-create-np4-shm.mpitest \
	tests/mpi/bitcode/xops-create-np4-tcp.mpitest \
	tests/mpi/bitcode/xops-allocate-np2-shm.mpitest \
	tests/mpi/bitcode/xops-allocate-np2-tcp.mpitest \
	tests/mpi/bitcode/xops-allocate-np3-shm.mpitest \
	tests/mpi/bitcode/xops-allocate-np3-tcp.mpitest \
	tests/mpi/bitcode/xops-allocate-np4-shm.mpitest \
	tests/mpi/bitcode/xops-allocate-np4-tcp.mpitest \
	tests/mpi/bitcode/xops-shared-np2-shm.mpitest \
	tests/mpi/bitcode/xops-shared-np2-tcp.mpitest \
	tests/mpi/bitcode/xops-shared-np3-shm.mpitest \
	tests/mpi/bitcode/xops-shared-np3-tcp.mpitest \
	tests/mpi/bitcode/xops-shared-np4-shm.mpitest \
	tests/mpi/bitcode/xops-shared-np4-tcp.mpitest \
	tests/mpi/bitcode/xops-dynamic-np2-shm.mpitest \
	tests/mpi/bitcode/xops-dynamic-np2-tcp.mpitest \
	tests/mpi/bitcode/xops-dynamic-np3-shm.mpitest \
	tests/mpi/bitcode/xops-dynamic-np3-tcp.mpitest \
	tests/mpi/bitcode/xops-dynamic-np4-shm.mpitest \
	tests/mpi/bitcode/xops-dynamic-np4-tcp.mpitest \
	tests/mpi/bitcode/threads-np2-shm.mpitest \
	tests/mpi/bitcode/threads-np2-tcp.mpitest \
	tests/mpi/bitcode/threads-np4-shm.mpitest \
	tests/mpi/bitcode/threads-np4-tcp.mpitest \
	tests/mpi/bitcode/progress_thread-np2-shm.mpitest \
	tests/mpi/bitcode/progress_thread-np2-tcp.mpitest

# Every configuration again with XRDMA_EXEC=target (run-mpitest sees the
# target/ directory): every X-op travels as a message, as without
# node-local execution.
CONFIG_TESTS += \
	tests/mpi/target/datatypes-shared-np2-shm.mpitest \
	tests/mpi/target/datatypes-allocate-np2-shm.mpitest \
	tests/mpi/target/datatypes-create-np2-tcp.mpitest \
	tests/mpi/target/datatypes-dynamic-np2-shm.mpitest \
	tests/mpi/target/xops-create-np2-shm.mpitest \
	tests/mpi/target/xops-create-np2-tcp.mpitest \
	tests/mpi/target/xops-create-np3-shm.mpitest \
	tests/mpi/target/xops-create-np3-tcp.mpitest \
	tests/mpi/target/xops-create-np4-shm.mpitest \
	tests/mpi/target/xops-create-np4-tcp.mpitest \
	tests/mpi/target/xops-allocate-np2-shm.mpitest \
	tests/mpi/target/xops-allocate-np2-tcp.mpitest \
	tests/mpi/target/xops-allocate-np3-shm.mpitest \
	tests/mpi/target/xops-allocate-np3-tcp.mpitest \
	tests/mpi/target/xops-allocate-np4-shm.mpitest \
	tests/mpi/target/xops-allocate-np4-tcp.mpitest \
	tests/mpi/target/xops-shared-np2-shm.mpitest \
	tests/mpi/target/xops-shared-np2-tcp.mpitest \
	tests/mpi/target/xops-shared-np3-shm.mpitest \
	tests/mpi/target/xops-shared-np3-tcp.mpitest \
	tests/mpi/target/xops-shared-np4-shm.mpitest \
	tests/mpi/target/xops-shared-np4-tcp.mpitest \
	tests/mpi/target/xops-dynamic-np2-shm.mpitest \
	tests/mpi/target/xops-dynamic-np2-tcp.mpitest \
	tests/mpi/target/xops-dynamic-np3-shm.mpitest \
	tests/mpi/target/xops-dynamic-np3-tcp.mpitest \
	tests/mpi/target/xops-dynamic-np4-shm.mpitest \
	tests/mpi/target/xops-dynamic-np4-tcp.mpitest \
	tests/mpi/target/threads-np2-shm.mpitest \
	tests/mpi/target/threads-np2-tcp.mpitest \
	tests/mpi/target/threads-np4-shm.mpitest \
	tests/mpi/target/threads-np4-tcp.mpitest \
	tests/mpi/target/progress_thread-np2-shm.mpitest \
	tests/mpi/target/progress_thread-np2-tcp.mpitest \
	tests/mpi/target/node_local-allocate-np2-shm.mpitest \
	tests/mpi/target/node_local-allocate-np3-shm.mpitest \
	tests/mpi/target/node_local-allocate-np4-shm.mpitest \
	tests/mpi/target/node_local-allocate-np3-tcp.mpitest \
	tests/mpi/target/node_local-shared-np3-shm.mpitest \
	tests/mpi/target/node_local-shared-np3-tcp.mpitest

# The profiling interface: a tool's MPIX_ wrappers over the PMPIX_ entry points.
check_PROGRAMS += tests/mpi/test_pmpix
tests_mpi_test_pmpix_SOURCES = tests/mpi/test_pmpix.c tests/mpi/mpitest.h
tests_mpi_test_pmpix_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_pmpix_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_pmpix_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/pmpix-np2-shm.mpitest tests/mpi/pmpix-np3-tcp.mpitest

# Many windows, plain MPI results and no XRDMA output (also past a window limit).
check_PROGRAMS += tests/mpi/test_windows
tests_mpi_test_windows_SOURCES = tests/mpi/test_windows.c tests/mpi/mpitest.h
tests_mpi_test_windows_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_windows_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_windows_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/windows-np3-tcp.mpitest tests/mpi/windows-many-np2-shm.mpitest

# MPI_Finalize left to atexit(), registered before XRDMA's first window.
check_PROGRAMS += tests/mpi/test_finalize_atexit
tests_mpi_test_finalize_atexit_SOURCES = tests/mpi/test_finalize_atexit.c tests/mpi/mpitest.h
tests_mpi_test_finalize_atexit_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_finalize_atexit_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_finalize_atexit_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/finalize_atexit-np2-shm.mpitest tests/mpi/finalize_atexit-np3-tcp.mpitest

# A window whose XRDMA set-up fails (XRDMA_DEBUG_WINDOW_FAIL) releases its
# slot, context and communicator: the windows after it work.
check_PROGRAMS += tests/mpi/test_window_setup
tests_mpi_test_window_setup_SOURCES = tests/mpi/test_window_setup.c tests/mpi/mpitest.h
tests_mpi_test_window_setup_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_window_setup_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_window_setup_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/window_setup-np2-shm.mpitest tests/mpi/window_setup-np3-tcp.mpitest

# xrdma_log() at the target, rate-limited (run-mpitest checks the output).
check_PROGRAMS += tests/mpi/test_log
tests_mpi_test_log_SOURCES = tests/mpi/test_log.c tests/mpi/mpitest.h
tests_mpi_test_log_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_log_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_log_LDFLAGS = -no-install
TEST_IFUNC_IMAGES += tests/mpi/ifuncs/log.xfn
EXTRA_DIST += tests/mpi/ifuncs/log.c
CONFIG_TESTS += tests/mpi/log-np2-shm.mpitest tests/mpi/log-np3-tcp.mpitest tests/mpi/bitcode/log-np2-shm.mpitest

# MPI_Win_flush without the component's flush when it has nothing to
# complete (XRDMA_FLUSH_SKIP); "off": the knob at 0.
check_PROGRAMS += tests/mpi/test_flush
tests_mpi_test_flush_SOURCES = tests/mpi/test_flush.c tests/mpi/mpitest.h
tests_mpi_test_flush_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_flush_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_flush_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/flush-create-np2-tcp.mpitest tests/mpi/flush-allocate-np3-shm.mpitest \
	tests/mpi/flush-off-np2-tcp.mpitest tests/mpi/target/flush-create-np3-tcp.mpitest

# Bundles of Xinvokes (XRDMA_BUNDLE); "single": the knob at 1. Over shm
# under target/: with XRDMA_EXEC=auto node peers' X-ops run at the origin.
check_PROGRAMS += tests/mpi/test_bundle
tests_mpi_test_bundle_SOURCES = tests/mpi/test_bundle.c tests/mpi/mpitest.h
tests_mpi_test_bundle_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_bundle_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_bundle_LDFLAGS = -no-install
TEST_IFUNC_IMAGES += tests/mpi/ifuncs/bundle.xfn
EXTRA_DIST += tests/mpi/ifuncs/bundle.c
CONFIG_TESTS += tests/mpi/bundle-create-np2-tcp.mpitest tests/mpi/bundle-allocate-np3-tcp.mpitest \
	tests/mpi/target/bundle-allocate-np2-shm.mpitest tests/mpi/target/bundle-create-np3-shm.mpitest \
	tests/mpi/target/bundle-single-np2-shm.mpitest tests/mpi/bitcode/bundle-create-np2-tcp.mpitest

# A rank dies on purpose: pending X-ops end with MPIX_ERR_PEER (TCP only).
check_PROGRAMS += tests/mpi/test_peer_death
tests_mpi_test_peer_death_SOURCES = tests/mpi/test_peer_death.c tests/mpi/mpitest.h
tests_mpi_test_peer_death_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_peer_death_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_peer_death_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/peer_death-np3-tcp.mpitest

# MPI-4's large-count window calls (MPI_Win_allocate_c ...) make XRDMA
# windows too; skipped under an MPI-3 library (Open MPI 4.1).
check_PROGRAMS += tests/mpi/test_large_count
tests_mpi_test_large_count_SOURCES = tests/mpi/test_large_count.c tests/mpi/mpitest.h
tests_mpi_test_large_count_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_test_large_count_LDADD = $(MPI_TEST_LDADD)
tests_mpi_test_large_count_LDFLAGS = -no-install
CONFIG_TESTS += tests/mpi/large_count-np2-shm.mpitest tests/mpi/large_count-np3-tcp.mpitest
