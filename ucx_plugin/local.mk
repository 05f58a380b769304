lib_LTLIBRARIES += libucx_ifunc.la
libucx_ifunc_la_SOURCES = \
	ucx_plugin/run/knobs.cc \
	ucx_plugin/image/sha256.cc ucx_plugin/image/sha256.h \
	ucx_plugin/image/image.cc ucx_plugin/image/image.h \
	ucx_plugin/image/elf_reader.cc ucx_plugin/image/elf_reader.h \
	ucx_plugin/load/start_files.cc ucx_plugin/load/start_files.h \
	ucx_plugin/wire/wire.cc ucx_plugin/wire/wire.h \
	ucx_plugin/load/loader_native.cc ucx_plugin/load/loader_native.h \
	ucx_plugin/load/code_cache.cc ucx_plugin/load/code_cache.h \
	ucx_plugin/load/compile_queue.cc ucx_plugin/load/compile_queue.h \
	ucx_plugin/run/context.cc ucx_plugin/run/context.h ucx_plugin/run/pending.h ucx_plugin/run/send.cc ucx_plugin/run/receive.cc ucx_plugin/run/arrive.h ucx_plugin/wire/ring.cc ucx_plugin/wire/ring.h ucx_plugin/run/dispatch.cc ucx_plugin/load/code_lookup.cc \
	ucx_plugin/run/origin.cc ucx_plugin/run/target.cc ucx_plugin/wire/binding.cc \
	ucx_plugin/compat/put_poll.cc ucx_plugin/compat/put_poll.h ucx_plugin/compat/poll_warm.h ucx_plugin/compat/frame_watch.cc ucx_plugin/compat/frame_watch.h \
	ucx_plugin/compat/rkey_memo.cc ucx_plugin/compat/rkey_memo.h \
	ucx_plugin/compat/compat.cc \
	ucx_plugin/run/fault.cc ucx_plugin/run/fault.h \
	ucx_plugin/load/policy.cc ucx_plugin/load/policy.h \
	ucx_plugin/load/library_path.cc ucx_plugin/load/library_path.h \
	ucx_plugin/run/runtime_api.cc ucx_plugin/run/runtime_api.h
libucx_ifunc_la_CPPFLAGS = $(PLUGIN_CPPFLAGS)
# The common utilities go into libucx_ifunc (one knob registry per process):
# the layers above use them from there.
libucx_ifunc_la_LIBADD = libxrdma_common.la $(UCX_LIBS) $(CRYPTO_LIBS) -ldl -lrt
# -Bsymbolic-functions: the library's calls to its own functions bind to
# them directly, not through the PLT (nothing here is meant to be
# interposed; the MPI_ interposers are in libmpix_xrdma_core).
libucx_ifunc_la_LDFLAGS = -version-info 0:0:0 -Wl,-Bsymbolic-functions

include_HEADERS += ucx_plugin/include/ucx_ifunc.h
ucx_ifunc_includedir = $(includedir)/ucx_ifunc
ucx_ifunc_include_HEADERS = ucx_plugin/include/ucx_ifunc/ucp_compat.h ucx_plugin/include/ucx_ifunc/runtime.h
pkgconfig_DATA += ucx_plugin/ucx-ifunc.pc

# The bitcode loader (LLVM ORC LLJIT) is a module of its own, loaded by
# jit_module.cc when bitcode is first needed, so that libucx_ifunc (and every
# MPI program) does not map LLVM. Compiled with LLVM's headers and without
# RTTI like LLVM itself (it subclasses LLVM classes), and exporting one symbol
# (xrdma_jit_module_v1). Built at the top of the build tree, so that
# .libs/libxrdma_jit.so lies beside .libs/libucx_ifunc.so, where the library
# looks first when run from the build tree.
libucx_ifunc_la_SOURCES += ucx_plugin/load/jit_module.cc
pkglib_LTLIBRARIES = libxrdma_jit.la
libxrdma_jit_la_SOURCES = ucx_plugin/load/loader_jit.cc ucx_plugin/load/loader_jit.h \
	ucx_plugin/load/jit_helper.cc ucx_plugin/load/jit_helper.h
libxrdma_jit_la_CPPFLAGS = $(PLUGIN_CPPFLAGS) $(LLVM_CPPFLAGS)
libxrdma_jit_la_CXXFLAGS = $(AM_CXXFLAGS) -fno-rtti -fvisibility=hidden
libxrdma_jit_la_LDFLAGS = -module -avoid-version -shared
libxrdma_jit_la_LIBADD = libucx_ifunc.la $(LLVM_LDFLAGS) $(LLVM_LIBS)

# The compile helper program (jit_helper.h): bitcode is compiled in a
# process of its own, which loads the JIT module. Installed beside it; in the
# build tree at the top, one folder above .libs/libxrdma_jit.so.
xrdmahelperdir = $(pkglibdir)
xrdmahelper_PROGRAMS = xrdma-jit-helper
xrdma_jit_helper_SOURCES = ucx_plugin/load/jit_helper_main.cc
xrdma_jit_helper_CPPFLAGS = $(PLUGIN_CPPFLAGS)
xrdma_jit_helper_LDADD = -ldl
