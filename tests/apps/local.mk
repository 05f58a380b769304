# The applications of apps/ as tests: each under mpirun with 2 and 3 ranks,
# over UCX shared memory and TCP, every variant at a small size, verified
# by the application itself; again with XRDMA_EXEC=target (tests/apps/
# target/); and the XRDMA variant with a broken function, which the
# verification must catch (APP-MUTANT). One .apptest name per
# configuration (tests/apps/run-apptest reads it).
TEST_EXTENSIONS += .apptest
APPTEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/apps/run-apptest
check_DATA += $(APPS_IMAGES) $(BFS_MUTANTS) $(DHT_MUTANTS)
CONFIG_TESTS += \
	tests/apps/bfs-np2-shm.apptest \
	tests/apps/bfs-np2-tcp.apptest \
	tests/apps/bfs-np3-shm.apptest \
	tests/apps/bfs-np3-tcp.apptest \
	tests/apps/target/bfs-np3-shm.apptest \
	tests/apps/dht-np2-shm.apptest \
	tests/apps/dht-np2-tcp.apptest \
	tests/apps/dht-np3-shm.apptest \
	tests/apps/dht-np3-tcp.apptest \
	tests/apps/target/dht-np3-shm.apptest \
	tests/apps/bfs-drop-np2-shm.apptest \
	tests/apps/bfs-twice-np3-tcp.apptest \
	tests/apps/dht-drop-np3-shm.apptest \
	tests/apps/dht-drop-np2-tcp.apptest
EXTRA_DIST += tests/apps/run-apptest
# apps/summary, the table of targets make bench-apps and make bench print.
TESTS += tests/apps/test_summary.sh
EXTRA_DIST += tests/apps/test_summary.sh
