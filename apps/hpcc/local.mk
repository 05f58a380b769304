# apps/hpcc: HPC Challenge RandomAccess (GUPS) from Debian's hpcc source
# package. fetch-hpcc puts the upstream tree, patched (patches/), in
# apps/hpcc/hpcc-1.5.0 of the build tree and keeps the tarball there, so
# it is fetched once. Nothing of it is in the repository, and nothing is
# built by plain `make` (it needs the network once): `make apps` builds
# hpcc_gups and the image of its XOR function; `make check` runs it
# (tests/apps-hpcc), `make bench-hpcc` measures it (apps/hpcc/bench), and
# apps/hpcc/profile counts instructions per update with callgrind.
HPCC_DIR = apps/hpcc/hpcc-1.5.0
HPCC_PATCHES = $(srcdir)/apps/hpcc/patches/harness.patch $(srcdir)/apps/hpcc/patches/rma.patch \
	$(srcdir)/apps/hpcc/patches/xrdma.patch
HPCC_XFN = $(HPCC_DIR)/RandomAccess/ra_xor_ifunc.xfn
# HPCC's own build defines LONG_IS_64BITS on LP64 machines. Without
# RA_TIME_BOUND every variant makes HPCC's recommended 4 updates per table
# word (only "rma" is bounded, see gups.c -a).
HPCC_CPPFLAGS = -DLONG_IS_64BITS -DRA_TIME_BOUND_DISABLE -I$(HPCC_DIR)/include \
	-I$(HPCC_DIR)/hpl/include -I$(HPCC_DIR)/RandomAccess -I$(srcdir)/apps/hpcc \
	-I$(top_srcdir)/ompi_ext/xrdma/c $(MPI_CPPFLAGS)

$(HPCC_DIR)/.patched: $(srcdir)/apps/hpcc/fetch-hpcc $(HPCC_PATCHES)
	$(AM_V_GEN)$(SHELL) $(srcdir)/apps/hpcc/fetch-hpcc apps/hpcc $(srcdir)/apps/hpcc/patches && touch $@

# HPCC's RandomAccess files the MPI benchmark uses, and HPL's CPU timer.
EXTRA_LIBRARIES += apps/hpcc/libhpcc_ra.a
nodist_apps_hpcc_libhpcc_ra_a_SOURCES = $(HPCC_DIR)/RandomAccess/MPIRandomAccess.c \
	$(HPCC_DIR)/RandomAccess/MPIRandomAccess_rma.c $(HPCC_DIR)/RandomAccess/MPIRandomAccess_xrdma.c \
	$(HPCC_DIR)/RandomAccess/buckets.c $(HPCC_DIR)/RandomAccess/pool.c $(HPCC_DIR)/RandomAccess/heap.c \
	$(HPCC_DIR)/RandomAccess/verification.c $(HPCC_DIR)/RandomAccess/utility.c \
	$(HPCC_DIR)/hpl/testing/timer/HPL_timer_cputime.c
apps_hpcc_libhpcc_ra_a_CPPFLAGS = $(HPCC_CPPFLAGS)
# Third-party code: built as it is, its warnings are not ours to fix.
apps_hpcc_libhpcc_ra_a_CFLAGS = -g -O2 -w
$(apps_hpcc_libhpcc_ra_a_OBJECTS) $(apps_hpcc_hpcc_gups_OBJECTS): $(HPCC_DIR)/.patched
$(HPCC_DIR)/RandomAccess/ra_xor_ifunc.c $(nodist_apps_hpcc_libhpcc_ra_a_SOURCES): $(HPCC_DIR)/.patched

EXTRA_PROGRAMS += apps/hpcc/hpcc_gups
apps_hpcc_hpcc_gups_SOURCES = apps/hpcc/gups.c apps/hpcc/ra_variant.h
apps_hpcc_hpcc_gups_CPPFLAGS = $(HPCC_CPPFLAGS) -DRA_XOR_IMAGE='"$(abs_builddir)/$(HPCC_XFN)"'
# The core (PMPI interposition) ahead of libmpi, as for tests/mpi.
apps_hpcc_hpcc_gups_LDADD = apps/hpcc/libhpcc_ra.a libmpix_xrdma_core.la libmpix_xrdma.la $(MPI_LIBS)
apps_hpcc_hpcc_gups_LDFLAGS = -no-install
EXTRA_apps_hpcc_hpcc_gups_DEPENDENCIES = $(HPCC_XFN)
EXTRA_DIST += apps/hpcc/README.md apps/hpcc/targets apps/hpcc/fetch-hpcc apps/hpcc/bench apps/hpcc/profile \
	$(HPCC_PATCHES)
CLEANFILES += apps/hpcc/hpcc_gups$(EXEEXT) apps/hpcc/libhpcc_ra.a $(HPCC_XFN)

apps-hpcc: apps/hpcc/hpcc_gups$(EXEEXT) $(HPCC_XFN)
apps: apps-hpcc

# The measurement on its own (make bench-apps runs it with the others).
bench-hpcc: apps-hpcc
	$(SHELL) $(srcdir)/apps/hpcc/bench $(abs_builddir) $(abs_srcdir) $(APPS_OUT)
profile-hpcc: apps-hpcc
	$(SHELL) $(srcdir)/apps/hpcc/profile $(abs_builddir) $(abs_srcdir) $(APPS_OUT)
.PHONY: apps apps-hpcc bench-hpcc profile-hpcc
