# apps/: existing SPMD kernels whose rules come from outside the project,
# each a complete MPI program that runs every variant (plain MPI and XRDMA)
# in the same job on the same input and verifies its own answers
# (apps/README.md). Each application is a folder with its own local.mk,
# included below; it adds its programs to APPS_PROGS and its ifunc images
# to APPS_IMAGES, and its bench driver (apps/<app>/bench) is found by
# apps/run-bench-apps. `make apps` builds them all, `make bench-apps`
# measures them (CSV, a chart per application, the table of targets).
APPS_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/c -I$(top_srcdir)/apps/common
# The core (PMPI interposition) first, ahead of libmpi: see ompi_ext/local.mk.
APPS_LDADD = libmpix_xrdma_core.la libmpix_xrdma.la $(MPI_LIBS) -lm
APPS_COMMON = apps/common/app.c apps/common/app.h apps/common/mix.h
APPS_PROGS =
APPS_IMAGES =
# An application's ifunc image, from the .c of the same name: as the
# top-level %.xfn rule, with apps/common (mix.h) on the include path too.
APPS_XRDMA_CC = tools/xrdma-cc $(IFUNC_CPPFLAGS) -I$(top_srcdir)/apps/common

include apps/bfs/local.mk
include apps/dht/local.mk
include apps/hpcc/local.mk

noinst_PROGRAMS += $(APPS_PROGS)
CLEANFILES += $(APPS_IMAGES)
EXTRA_DIST += apps/README.md apps/run-bench-apps apps/plot apps/summary apps/profile-apps apps/count-lines apps/project apps/common/bench-lib.sh

apps: $(APPS_PROGS:=$(EXEEXT)) $(APPS_IMAGES)
# `make bench-apps`: every application's bench driver, CSV into
# $(APPS_OUT), a chart per application, the table of targets.
APPS_OUT = $(BENCH_OUT)/apps
bench-apps: apps plot-tools
	@MPIRUN=$(MPIRUN) $(SHELL) $(srcdir)/apps/run-bench-apps $(abs_builddir) $(abs_srcdir) $(APPS_OUT)
.PHONY: apps bench-apps
