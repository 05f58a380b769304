# The MPI layer, in two libraries so that an Open MPI built with
# --enable-mpi-ext=xrdma (ompi_ext/xrdma as ompi/mpiext/xrdma) compiles the
# MPIX_* entry points into its libmpi and links this same core, instead of a
# second copy of it:
#   libmpix_xrdma_core: the C++ core + PMPI interposition (ompi_ext/xrdma/core)
#   libmpix_xrdma:      MPIX_* entry points (ompi_ext/xrdma/c, one file per
#                       function, as in an Open MPI mpiext) over the core.
# The core's MPI_Init/MPI_Win_* must come before libmpi in the symbol search
# order, so -lmpix_xrdma_core has to be a direct dependency of the program,
# ahead of -lmpi: the installed libmpix_xrdma.so is a linker script naming
# both libraries (see install-exec-hook below), and an Open MPI with the
# extension puts -lmpix_xrdma_core in its wrappers' flags
# (ompi_ext/xrdma/configure.m4).
# The core sees the plugin's public headers, the ifunc runtime API it
# implements (include/) and its own folder, not the entry points' (c/): it
# does not include from the layer above (tests/docs/test_architecture.sh).
MPIX_XRDMA_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/include \
	-I$(top_srcdir)/ompi_ext/xrdma/core $(MPI_CPPFLAGS) $(HWLOC_CFLAGS) -DOMPI_SKIP_MPICXX=1
# The entry points see what an Open MPI build of the extension gives them:
# mpi.h, their own folder, and the core's C interface (../core/core_api.h).
MPIX_XRDMA_C_CPPFLAGS = $(MPI_CPPFLAGS) -DOMPI_SKIP_MPICXX=1

lib_LTLIBRARIES += libmpix_xrdma_core.la libmpix_xrdma.la
libmpix_xrdma_core_la_SOURCES = \
	ompi_ext/xrdma/core/core_api.h ompi_ext/xrdma/core/op_wire.h \
	ompi_ext/xrdma/core/errors.cc ompi_ext/xrdma/core/errors.h ompi_ext/xrdma/core/knobs.cc \
	ompi_ext/xrdma/core/datatype.cc ompi_ext/xrdma/core/datatype.h \
	ompi_ext/xrdma/core/runtime.cc ompi_ext/xrdma/core/runtime.h \
	ompi_ext/xrdma/core/window.cc ompi_ext/xrdma/core/window.h \
	ompi_ext/xrdma/core/group.cc ompi_ext/xrdma/core/group.h \
	ompi_ext/xrdma/core/node_local.cc ompi_ext/xrdma/core/node_local.h \
	ompi_ext/xrdma/core/target_lock.cc ompi_ext/xrdma/core/target_lock.h \
	ompi_ext/xrdma/core/op_target.cc ompi_ext/xrdma/core/ops.cc \
	ompi_ext/xrdma/core/stream.cc ompi_ext/xrdma/core/stream.h ompi_ext/xrdma/core/op_view.h \
	ompi_ext/xrdma/core/ifunc.cc ompi_ext/xrdma/core/pmpi.cc \
	ompi_ext/xrdma/core/mpi_impl.h ompi_ext/xrdma/core/osc_flush.h
# What one MPI implementation needs beyond the standard (mpi_impl.h): one
# set of files per MPI, chosen by configure --with-mpi.
if XRDMA_MPI_MPICH
libmpix_xrdma_core_la_SOURCES += \
	ompi_ext/xrdma/core/mpi_mpich.cc ompi_ext/xrdma/core/mpi_mpich.h ompi_ext/xrdma/core/pmpi_mpich.cc
else
libmpix_xrdma_core_la_SOURCES += \
	ompi_ext/xrdma/core/mpi_openmpi.cc ompi_ext/xrdma/core/progress_hook.cc \
	ompi_ext/xrdma/core/osc_flush.cc ompi_ext/xrdma/core/osc_table.c ompi_ext/xrdma/core/osc_table.h
endif
EXTRA_DIST += ompi_ext/xrdma/core/mpi_mpich.cc ompi_ext/xrdma/core/mpi_mpich.h \
	ompi_ext/xrdma/core/pmpi_mpich.cc ompi_ext/xrdma/core/mpi_openmpi.cc ompi_ext/xrdma/core/progress_hook.cc \
	ompi_ext/xrdma/core/osc_flush.cc ompi_ext/xrdma/core/osc_table.c ompi_ext/xrdma/core/osc_table.h
libmpix_xrdma_core_la_CPPFLAGS = $(MPIX_XRDMA_CPPFLAGS)
# Calls into the plugin and the other libraries through the GOT, without a
# PLT stub's jump each: the target side calls xrdma_rank() and
# ucx_ifunc_ctx_set_forward_prefix() on every X-op.
libmpix_xrdma_core_la_CXXFLAGS = $(AM_CXXFLAGS) -fno-plt
# No -lopen-pal: opal_progress_register (progress_hook.cc) binds to the
# libopen-pal that the program's libmpi loads. As a needed entry of the core
# it would be looked up on the core's own run path first and, with an Open
# MPI installed elsewhere than the one XRDMA was built against, bring the
# system's libopen-pal.so.40 in beside that Open MPI's libmpi.
libmpix_xrdma_core_la_LIBADD = libucx_ifunc.la $(MPI_LIBS) $(HWLOC_LIBS) $(UCX_LIBS)
libmpix_xrdma_core_la_LDFLAGS = -version-info 0:0:0

libmpix_xrdma_la_SOURCES = \
	ompi_ext/xrdma/c/MPIX_Xput.c ompi_ext/xrdma/c/MPIX_Rxput.c \
	ompi_ext/xrdma/c/MPIX_Xget.c ompi_ext/xrdma/c/MPIX_Rxget.c \
	ompi_ext/xrdma/c/MPIX_Xinvoke.c ompi_ext/xrdma/c/MPIX_Rxinvoke.c \
	ompi_ext/xrdma/c/MPIX_Ifunc_load.c ompi_ext/xrdma/c/MPIX_Ifunc_load_mem.c \
	ompi_ext/xrdma/c/MPIX_Ifunc_free.c ompi_ext/xrdma/c/MPIX_Xprogress.c \
	ompi_ext/xrdma/c/mpiext_xrdma_c.h ompi_ext/xrdma/c/mpix_xrdma.h \
	ompi_ext/xrdma/c/xrdma_mpi.h ompi_ext/xrdma/core/core_api.h
libmpix_xrdma_la_CPPFLAGS = $(MPIX_XRDMA_C_CPPFLAGS)
libmpix_xrdma_la_LIBADD = libmpix_xrdma_core.la $(MPI_LIBS)
libmpix_xrdma_la_LDFLAGS = -version-info 0:0:0

# Only the public API is installed: the MPIX_* functions' headers, and the
# MPI layer's runtime API for ifuncs (include/xrdma_ifunc.h, over the
# plugin's <ucx_ifunc/runtime.h>). xrdma_mpi.h, what the MPIX_* entry
# points include to call the core (its C interface, core/core_api.h), lives
# beside them in ompi_ext/xrdma/c: an Open MPI built with the extension
# compiles both from the extension's folder, not from an install.
include_HEADERS += ompi_ext/xrdma/c/mpix_xrdma.h ompi_ext/xrdma/c/mpiext_xrdma_c.h \
	ompi_ext/xrdma/include/xrdma_ifunc.h
pkgconfig_DATA += ompi_ext/mpix-xrdma.pc
EXTRA_DIST += ompi_ext/xrdma/configure.m4 ompi_ext/xrdma/Makefile.am \
	ompi_ext/xrdma/c/Makefile.am

# `cc app.c -lmpix_xrdma` must make both libraries direct dependencies, the
# core first (a dependency of a dependency is searched after libmpi): the
# development link libmpix_xrdma.so becomes a linker script, as libc.so is.
# With the linker's --as-needed (Debian's default) a library in it is kept
# only when something linked before it refers to it, so the script names an
# object first that refers to the core (ompi_ext/link_anchor.c), installed in
# $(libdir)/xrdma. Compiled without $(CFLAGS): a sanitizer build's flags
# would make every program that links it need the sanitizer's runtime.
xrdmalinkexecdir = $(libdir)/xrdma
xrdmalinkexec_DATA = ompi_ext/link_core.o
ompi_ext/link_core.o: $(srcdir)/ompi_ext/link_anchor.c
	$(AM_V_CC)$(MKDIR_P) $(@D) && $(CC) -fPIC -O2 -c -o $@ $(srcdir)/ompi_ext/link_anchor.c
CLEANFILES += ompi_ext/link_core.o
EXTRA_DIST += ompi_ext/link_anchor.c
install-exec-hook: install-mpix-xrdma-ldscript
install-mpix-xrdma-ldscript:
	rm -f $(DESTDIR)$(libdir)/libmpix_xrdma.so
	printf '%s\n' '/* GNU ld script: the XRDMA core (PMPI interposition) before the MPIX_* entry points, both before libmpi;' \
	  '   xrdma/link_core.o refers to the core, which keeps it with --as-needed. */' \
	  'INPUT(xrdma/link_core.o libmpix_xrdma_core.so.0 libmpix_xrdma.so.0)' > $(DESTDIR)$(libdir)/libmpix_xrdma.so
.PHONY: install-mpix-xrdma-ldscript
