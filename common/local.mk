# Common utilities under both layers (the way UCS sits under UCP): knobs,
# logging, byte buffers, free lists, whole-file reads. A convenience library
# linked into libucx_ifunc only, so that a process has one knob registry;
# headers in common/include/xrdma_common, included as "xrdma_common/...".
noinst_LTLIBRARIES += libxrdma_common.la
libxrdma_common_la_SOURCES = \
	common/config.cc common/include/xrdma_common/config.h \
	common/knobs.cc \
	common/log.cc common/include/xrdma_common/log.h \
	common/file.cc common/include/xrdma_common/file.h \
	common/include/xrdma_common/bytes.h \
	common/include/xrdma_common/free_list.h \
	common/include/xrdma_common/hot.h \
	common/include/xrdma_common/cpu.h
