# check-ompi-ext: build Debian's Open MPI 4.1.4 with ompi_ext/xrdma as the MPI
# extension "xrdma" and run a program built with its mpicc (tests/ompi_ext/
# README.md). About 30 minutes on 2 cores, so not part of `make check`.
# Options go through XRDMA_OMPI_FLAGS, e.g.
#   make check-ompi-ext XRDMA_OMPI_FLAGS=--reuse
XRDMA_OMPI_FLAGS =
check-ompi-ext:
	$(SHELL) $(top_srcdir)/tests/ompi_ext/build-openmpi-with-xrdma.sh \
	  --xrdma-src $(abs_top_srcdir) $(XRDMA_OMPI_FLAGS)
.PHONY: check-ompi-ext
EXTRA_DIST += tests/ompi_ext/build-openmpi-with-xrdma.sh tests/ompi_ext/mpi_ext_xput_xget.c \
	tests/ompi_ext/README.md
