# benchmarks: MPI-launched measurements of the plugin (`make bench-plugin`).
noinst_PROGRAMS += benchmarks/plugin_invoke_latency
benchmarks_plugin_invoke_latency_SOURCES = benchmarks/plugin_invoke_latency.c benchmarks/bench_common.h
benchmarks_plugin_invoke_latency_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
benchmarks_plugin_invoke_latency_LDADD = libucx_ifunc.la $(UCX_LIBS) $(MPI_LIBS)
# A real executable (no libtool wrapper): it finds its image beside itself.
benchmarks_plugin_invoke_latency_LDFLAGS = -no-install
EXTRA_benchmarks_plugin_invoke_latency_DEPENDENCIES = $(BENCH_IFUNC_IMAGES)

BENCH_IFUNC_IMAGES = benchmarks/echo_ifunc.xfn benchmarks/echo_ifunc_bc.xfn
# The same ifunc with LLVM bitcode only: the target compiles it (JIT).
benchmarks/echo_ifunc_bc.xfn: benchmarks/echo_ifunc.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=bitcode $(IFUNC_CPPFLAGS) -o $@ $<
EXTRA_DIST += benchmarks/echo_ifunc.c
CLEANFILES += $(BENCH_IFUNC_IMAGES)


# The published ifunc API's throughput and ping-pong loops against plain
# frames of the same size (compat_msg_rate.c; also in `make bench`), with an
# ifunc library built as that API's users build theirs.
noinst_PROGRAMS += benchmarks/compat_msg_rate
benchmarks_compat_msg_rate_SOURCES = benchmarks/compat_msg_rate.c benchmarks/bench_common.h
benchmarks_compat_msg_rate_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
benchmarks_compat_msg_rate_LDADD = libucx_ifunc.la $(UCX_LIBS) $(MPI_LIBS)
benchmarks_compat_msg_rate_LDFLAGS = -no-install
EXTRA_benchmarks_compat_msg_rate_DEPENDENCIES = benchmarks/compat_inc.so
EXTRA_DIST += benchmarks/compat_inc.c
CLEANFILES += benchmarks/compat_inc.so
benchmarks/compat_inc.so: benchmarks/compat_inc.c
	$(AM_V_CC)$(MKDIR_P) $(@D) && gcc -shared -fPIC -O2 -o $@ $<

bench-compat: benchmarks/compat_msg_rate$(EXEEXT) benchmarks/compat_inc.so
	@for t in shm tcp; do \
	  $(BENCH_TLS_ENV); \
	  echo "=== compat_msg_rate over $$t ==="; \
	  $(BENCH_MPIRUN) $(BENCH_MPIRUN_FLAGS) $$env -n 2 benchmarks/compat_msg_rate$(EXEEXT) || exit 1; \
	done
.PHONY: bench-compat

BENCH_MPIRUN = $(MPIRUN)
# In a loop over t = shm, tcp: env = mpirun's options selecting that transport.
BENCH_TLS_ENV = case $$t in \
	    shm) env="-x UCX_TLS=sm,self" ;; \
	    tcp) env="-x UCX_TLS=tcp -x UCX_NET_DEVICES=lo" ;; \
	  esac
BENCH_MPIRUN_FLAGS = $(XRDMA_MPIRUN_FLAGS)
BENCH_PLUGIN_ARGS =

# Warm ifunc round trip vs. a predeployed UCP AM ping-pong, and the cold
# first invocation, over UCX shared memory and over TCP loopback.
bench-plugin: benchmarks/plugin_invoke_latency$(EXEEXT) $(BENCH_IFUNC_IMAGES)
	@for t in shm tcp; do \
	  $(BENCH_TLS_ENV); \
	  echo "=== plugin_invoke_latency over $$t ==="; \
	  $(BENCH_MPIRUN) $(BENCH_MPIRUN_FLAGS) $$env -n 2 \
	    benchmarks/plugin_invoke_latency$(EXEEXT) $(BENCH_PLUGIN_ARGS) || exit 1; \
	  echo; \
	done
.PHONY: bench-plugin

include $(srcdir)/benchmarks/suite.mk
