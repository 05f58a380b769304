# fortran: the mpix_xrdma module (mpi_f08 style) in libmpix_xrdma_f08, with
# its C side: f08_shim.c (descriptors and MPI_VAL handles to the C API) and
# f08_interpose.c or f08_interpose_mpich.c (Open MPI's or MPICH's Fortran
# bindings of the calls XRDMA interposes routed through XRDMA's). Built only
# when configure found an MPI Fortran compiler with mpi_f08 (XRDMA_F08). The module file goes to $(includedir):
# mpifort -I$prefix/include app.f90 -lmpix_xrdma_f08 (or pkg-config
# mpix-xrdma-f08, or CMake's XRDMA::mpix_xrdma_f08). Man page:
# mpix_xrdma_f08(3); example and test: examples/mpi_f08_xops.f90,
# tests/fortran/local.mk.
EXTRA_DIST += fortran/mpix_xrdma.f90 fortran/f08_shim.c fortran/f08_interpose.c fortran/f08_interpose_mpich.c \
	fortran/mpix_xrdma_f08.3 examples/mpi_f08_xops.f90 examples/mpi_f08_ifunc.c fortran/mpix-xrdma-f08.pc.in
dist_man_MANS += fortran/mpix_xrdma_f08.3
if XRDMA_F08
lib_LTLIBRARIES += libmpix_xrdma_f08.la
libmpix_xrdma_f08_la_SOURCES = fortran/mpix_xrdma.f90 fortran/f08_shim.c
# Neither MPI's mpi_f08 bindings call the C MPI_ functions the core
# interposes: f08_interpose.c routes Open MPI's, f08_interpose_mpich.c MPICH's.
if XRDMA_MPI_OPENMPI
libmpix_xrdma_f08_la_SOURCES += fortran/f08_interpose.c
else
libmpix_xrdma_f08_la_SOURCES += fortran/f08_interpose_mpich.c
endif
libmpix_xrdma_f08_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/c $(MPI_CPPFLAGS)
libmpix_xrdma_f08_la_FCFLAGS = -J fortran -Wall $(MPI_FCFLAGS)
libmpix_xrdma_f08_la_LIBADD = libmpix_xrdma_core.la libmpix_xrdma.la $(MPI_FLIBS)
libmpix_xrdma_f08_la_LDFLAGS = -version-info 0:0:0
nodist_include_HEADERS = fortran/mpix_xrdma.mod
pkgconfig_DATA += fortran/mpix-xrdma-f08.pc
# gfortran writes the module file when it compiles the module's source.
fortran/mpix_xrdma.mod: fortran/libmpix_xrdma_f08_la-mpix_xrdma.lo
	@:
CLEANFILES += fortran/mpix_xrdma.mod

# The example: its image beside it (only origins read it). The interposing
# library must come ahead of Open MPI's Fortran libraries, the core ahead of
# libmpi (as for C: ompi_ext/local.mk), and both stay with --as-needed
# (fortran/link_f08.o, as in the installed linker script).
noinst_PROGRAMS += examples/mpi_f08_xops
examples_mpi_f08_xops_SOURCES = examples/mpi_f08_xops.f90
examples_mpi_f08_xops_FCFLAGS = -I fortran $(MPI_FCFLAGS)
examples_mpi_f08_xops_LDADD = fortran/link_f08.o libmpix_xrdma_f08.la libmpix_xrdma_core.la libmpix_xrdma.la $(MPI_FLIBS)
examples_mpi_f08_xops_LDFLAGS = -no-install
EXTRA_examples_mpi_f08_xops_DEPENDENCIES = examples/mpi_f08_ifunc.xfn
$(examples_mpi_f08_xops_OBJECTS): fortran/mpix_xrdma.mod
CLEANFILES += examples/mpi_f08_ifunc.xfn
endif

# Installed: libmpix_xrdma_f08.so is a linker script naming the three
# libraries in the order they must be searched (see ompi_ext/local.mk), after
# an object that refers to the Fortran library and to the core: a Fortran
# program refers to neither directly, and --as-needed would drop them.
if XRDMA_F08
xrdmalinkexec_DATA += fortran/link_f08.o
endif
fortran/link_f08.o: $(srcdir)/ompi_ext/link_anchor.c
	$(AM_V_CC)$(MKDIR_P) $(@D) && $(CC) -fPIC -O2 -DXRDMA_LINK_F08 -c -o $@ $(srcdir)/ompi_ext/link_anchor.c
CLEANFILES += fortran/link_f08.o
install-exec-hook: install-mpix-xrdma-f08-ldscript
install-mpix-xrdma-f08-ldscript:
	if test -f $(DESTDIR)$(libdir)/libmpix_xrdma_f08.so.0; then \
	  rm -f $(DESTDIR)$(libdir)/libmpix_xrdma_f08.so && \
	  printf '%s\n' '/* GNU ld script: XRDMA Fortran (ahead of Open MPI Fortran bindings), core, MPIX_* entry points;' \
	    '   xrdma/link_f08.o refers to the first two, which keeps them with --as-needed. */' \
	    'INPUT(xrdma/link_f08.o libmpix_xrdma_f08.so.0 libmpix_xrdma_core.so.0 libmpix_xrdma.so.0)' \
	    > $(DESTDIR)$(libdir)/libmpix_xrdma_f08.so; \
	fi
.PHONY: install-mpix-xrdma-f08-ldscript
