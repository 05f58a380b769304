# The installed tree works for users (mpicc and mpicxx -lmpix_xrdma, pkg-config, CMake, man).
TESTS += tests/install/test_install.sh
CLEANFILES += .stage-install.lock tests/install/staged.stamp tests/install/staged.log
# The tree is installed once, before any test runs (check_DATA): libtool
# relinks the libraries inside .libs while it installs (moving each aside,
# then back), and a test that loaded them from .libs at that moment (any
# MPI or Python test) failed with "invalid ELF header". The install tests
# copy this staged tree (tests/install/stage-install.sh). Remade at
# make check whenever anything installed changed, and only after every other
# program and file the tests need is built (they link or run from .libs too:
# order-only, as some of them are phony).
check_DATA += tests/install/staged.stamp
tests/install/staged.stamp: $(LTLIBRARIES) $(PROGRAMS) $(SCRIPTS) $(MANS) $(DATA) $(HEADERS) Makefile \
		| $(check_PROGRAMS) $(filter-out tests/install/staged.stamp,$(check_DATA))
	$(AM_V_GEN)rm -rf tests/install/staged $@ && $(MKDIR_P) tests/install && \
	  $(MAKE) $(AM_MAKEFLAGS) install DESTDIR=$(abs_builddir)/tests/install/staged >tests/install/staged.log 2>&1 && \
	  touch $@ || { tail -20 tests/install/staged.log; exit 1; }
clean-local: clean-install-staged
clean-install-staged:
	rm -rf tests/install/staged
.PHONY: clean-install-staged
EXTRA_DIST += tests/install/test_install.sh tests/install/stage-install.sh tests/install/hello_xrdma.c tests/install/sum_ifunc.c \
	tests/install/cmake/CMakeLists.txt tests/install/cmake-cxx/CMakeLists.txt
