# xrdma-cc: compiler driver that turns ifunc sources into images
bin_PROGRAMS += tools/xrdma-cc
tools_xrdma_cc_SOURCES = tools/xrdma-cc.cc
tools_xrdma_cc_CPPFLAGS = $(PLUGIN_CPPFLAGS)
tools_xrdma_cc_LDADD = libucx_ifunc.la
# It reads bitcode (entry names) through the JIT module, loaded at run time.
EXTRA_tools_xrdma_cc_DEPENDENCIES = libxrdma_jit.la
dist_man_MANS += man/xrdma-cc.1 man/xrdma-image.5
