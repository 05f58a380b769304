# The CMake package: find_package(XRDMA) finds lib/cmake/XRDMA/XRDMAConfig.cmake
# (imported targets XRDMA::mpix_xrdma and XRDMA::ucx_ifunc, and
# xrdma_add_image() that runs xrdma-cc). Paths in it are relative to its own
# place, so a staged (DESTDIR) or moved installation works too.
xrdmacmakedir = $(libdir)/cmake/XRDMA
xrdmacmake_DATA = tools/XRDMAConfig.cmake tools/XRDMAConfigVersion.cmake
CLEANFILES += $(xrdmacmake_DATA)
EXTRA_DIST += tools/XRDMAConfig.cmake.in tools/XRDMAConfigVersion.cmake.in
tools/XRDMAConfig.cmake: $(srcdir)/tools/XRDMAConfig.cmake.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	  to_prefix=$$(realpath -m --relative-to='$(xrdmacmakedir)' '$(prefix)') && \
	  rel() { realpath -m --relative-to='$(prefix)' "$$1"; } && \
	  sed -e "s|@XRDMA_CMAKE_TO_PREFIX@|$$to_prefix|" \
	      -e "s|@XRDMA_REL_INCLUDEDIR@|$$(rel '$(includedir)')|" \
	      -e "s|@XRDMA_REL_LIBDIR@|$$(rel '$(libdir)')|" \
	      -e "s|@XRDMA_REL_BINDIR@|$$(rel '$(bindir)')|" \
	      -e 's|@XRDMA_PACKAGE_VERSION@|$(PACKAGE_VERSION)|' $(srcdir)/tools/XRDMAConfig.cmake.in >$@.tmp && mv $@.tmp $@
tools/XRDMAConfigVersion.cmake: $(srcdir)/tools/XRDMAConfigVersion.cmake.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	  sed -e 's|@XRDMA_PACKAGE_VERSION@|$(PACKAGE_VERSION)|' $(srcdir)/tools/XRDMAConfigVersion.cmake.in >$@.tmp && mv $@.tmp $@
