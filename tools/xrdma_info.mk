# xrdma_info: versions, UCX transports, topology and XRDMA_* knobs
bin_PROGRAMS += tools/xrdma_info
tools_xrdma_info_SOURCES = tools/xrdma_info.cc
tools_xrdma_info_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS)
tools_xrdma_info_LDADD = libucx_ifunc.la $(UCX_LIBS) $(HWLOC_LIBS)
dist_man_MANS += man/xrdma_info.1 man/ucx_ifunc.3
