# xrdma_info: versions, UCX transports, topology and XRDMA_* knobs
bin_PROGRAMS += tools/xrdma_info
# The MPI layer's knob table (no MPI in it), so that -c lists every knob.
tools_xrdma_info_SOURCES = tools/xrdma_info.cc ompi_ext/xrdma/core/knobs.cc
tools_xrdma_info_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS)
tools_xrdma_info_LDADD = libucx_ifunc.la $(UCX_LIBS) $(HWLOC_LIBS)
dist_man_MANS += man/xrdma_info.1 man/ucx_ifunc.3
