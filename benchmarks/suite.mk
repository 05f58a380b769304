# The OSU-style X-RDMA benchmark suite (`make bench`): MPI programs on the
# MPIX API, each measuring its MPI and plain-UCP baselines in the same run.
# benchmarks/drivers/run-bench runs them all over shared memory and TCP, writes CSV,
# charts (benchmarks/drivers/plot) and the table of targets (benchmarks/drivers/summary).
OSU_BENCH_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS) -I$(top_srcdir)/ompi_ext/xrdma/c
# The core (PMPI interposition) first, ahead of libmpi: see ompi_ext/local.mk.
OSU_BENCH_LDADD = libmpix_xrdma_core.la libmpix_xrdma.la libucx_ifunc.la $(UCX_LIBS) $(MPI_LIBS)
OSU_BENCH_HDRS = benchmarks/osu_common.h benchmarks/osu_ops.h benchmarks/bench_common.h

OSU_LAT_PROGS = benchmarks/osu_xput_latency benchmarks/osu_xget_latency benchmarks/osu_xinvoke_latency
noinst_PROGRAMS += $(OSU_LAT_PROGS)
benchmarks_osu_xput_latency_SOURCES = benchmarks/osu_xlat.c $(OSU_BENCH_HDRS)
benchmarks_osu_xput_latency_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=0
benchmarks_osu_xput_latency_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xput_latency_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xput_latency_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
benchmarks_osu_xget_latency_SOURCES = benchmarks/osu_xlat.c $(OSU_BENCH_HDRS)
benchmarks_osu_xget_latency_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=1
benchmarks_osu_xget_latency_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xget_latency_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xget_latency_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
benchmarks_osu_xinvoke_latency_SOURCES = benchmarks/osu_xlat.c $(OSU_BENCH_HDRS)
benchmarks_osu_xinvoke_latency_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=2
benchmarks_osu_xinvoke_latency_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xinvoke_latency_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xinvoke_latency_DEPENDENCIES = benchmarks/osu_ifuncs.xfn

OSU_BW_PROGS = benchmarks/osu_xput_bw benchmarks/osu_xget_bw benchmarks/osu_xinvoke_mr benchmarks/osu_xacc_mr
noinst_PROGRAMS += $(OSU_BW_PROGS)
benchmarks_osu_xput_bw_SOURCES = benchmarks/osu_xbw.c $(OSU_BENCH_HDRS)
benchmarks_osu_xput_bw_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=0
benchmarks_osu_xput_bw_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xput_bw_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xput_bw_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
benchmarks_osu_xget_bw_SOURCES = benchmarks/osu_xbw.c $(OSU_BENCH_HDRS)
benchmarks_osu_xget_bw_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=1
benchmarks_osu_xget_bw_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xget_bw_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xget_bw_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
benchmarks_osu_xinvoke_mr_SOURCES = benchmarks/osu_xbw.c $(OSU_BENCH_HDRS)
benchmarks_osu_xinvoke_mr_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=2
benchmarks_osu_xinvoke_mr_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xinvoke_mr_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xinvoke_mr_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
benchmarks_osu_xacc_mr_SOURCES = benchmarks/osu_xbw.c $(OSU_BENCH_HDRS)
benchmarks_osu_xacc_mr_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -DOSU_OP=3
benchmarks_osu_xacc_mr_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xacc_mr_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xacc_mr_DEPENDENCIES = benchmarks/osu_ifuncs.xfn

noinst_PROGRAMS += benchmarks/osu_xinvoke_cold
benchmarks_osu_xinvoke_cold_SOURCES = benchmarks/osu_xinvoke_cold.c $(OSU_BENCH_HDRS)
benchmarks_osu_xinvoke_cold_CPPFLAGS = $(OSU_BENCH_CPPFLAGS)
benchmarks_osu_xinvoke_cold_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xinvoke_cold_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xinvoke_cold_DEPENDENCIES = $(COLD_IMAGES)

# Warm Xgets from one rank during another rank's cold 1 MiB bitcode compile
# at the same target, 3 ranks.
noinst_PROGRAMS += benchmarks/osu_xget_compile
benchmarks_osu_xget_compile_SOURCES = benchmarks/osu_xget_compile.c $(OSU_BENCH_HDRS)
benchmarks_osu_xget_compile_CPPFLAGS = $(OSU_BENCH_CPPFLAGS)
benchmarks_osu_xget_compile_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xget_compile_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xget_compile_DEPENDENCIES = benchmarks/cold_bitcode_1m.xfn benchmarks/osu_ifuncs.xfn

# A large reduction into a target region: streaming MPIX_Xput against
# MPI_Put plus the target's combine loop, and the target's extra memory.
noinst_PROGRAMS += benchmarks/osu_xstream
benchmarks_osu_xstream_SOURCES = benchmarks/osu_xstream.c benchmarks/bench_common.h
benchmarks_osu_xstream_CPPFLAGS = $(OSU_BENCH_CPPFLAGS)
benchmarks_osu_xstream_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_xstream_LDFLAGS = -no-install
EXTRA_benchmarks_osu_xstream_DEPENDENCIES = benchmarks/osu_ifuncs.xfn

# Which way a small message reaches a peer fastest in plain UCX (active
# message, ucp_put_nbx + poll, stores through ucp_rkey_ptr): the measurement
# behind the plugin's rings.
noinst_PROGRAMS += benchmarks/ucp_path_probe
benchmarks_ucp_path_probe_SOURCES = benchmarks/ucp_path_probe.c benchmarks/bench_common.h
benchmarks_ucp_path_probe_CPPFLAGS = $(OSU_BENCH_CPPFLAGS)
benchmarks_ucp_path_probe_LDADD = $(OSU_BENCH_LDADD)
benchmarks_ucp_path_probe_LDFLAGS = -no-install

# Images of about 4 KiB .. 1 MiB for osu_xinvoke_cold: a generated source
# per kind and size, padded with incompressible data (gen-cold-ifunc), built
# with only a native part, or only bitcode for this host's triple. An empty
# native image is ~15.5 KiB (an ELF shared object), a bitcode one ~3 KiB:
# the padding makes up the rest.
COLD_SIZES = 4k 16k 64k 256k 1m
COLD_IMAGES = $(COLD_SIZES:%=benchmarks/cold_native_%.xfn) $(COLD_SIZES:%=benchmarks/cold_bitcode_%.xfn)
cold_pad_native_4k = 64
cold_pad_native_16k = 512
cold_pad_native_64k = 49664
cold_pad_native_256k = 246272
cold_pad_native_1m = 1032704
cold_pad_bitcode_4k = 1296
cold_pad_bitcode_16k = 13584
cold_pad_bitcode_64k = 62768
cold_pad_bitcode_256k = 259344
cold_pad_bitcode_1m = 1045776
# (Two rules: one pattern rule with two targets would make both at once.)
benchmarks/cold_native_%.c: $(srcdir)/benchmarks/gen-cold-ifunc
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	  $(SHELL) $(srcdir)/benchmarks/gen-cold-ifunc $(cold_pad_native_$*) >$@.tmp && mv $@.tmp $@
benchmarks/cold_bitcode_%.c: $(srcdir)/benchmarks/gen-cold-ifunc
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	  $(SHELL) $(srcdir)/benchmarks/gen-cold-ifunc $(cold_pad_bitcode_$*) >$@.tmp && mv $@.tmp $@
benchmarks/cold_native_%.xfn: benchmarks/cold_native_%.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)tools/xrdma-cc --emit=native $(IFUNC_CPPFLAGS) -o $@ $<
benchmarks/cold_bitcode_%.xfn: benchmarks/cold_bitcode_%.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)tools/xrdma-cc --emit=bitcode --target=$$($(CC) -dumpmachine) $(IFUNC_CPPFLAGS) -o $@ $<
# Keep the generated sources (they are intermediate files to make).
.SECONDARY: $(COLD_IMAGES:.xfn=.c)
CLEANFILES += $(COLD_IMAGES) $(COLD_IMAGES:.xfn=.c)
EXTRA_DIST += benchmarks/gen-cold-ifunc

# The pointer chase; its AM baseline's worker is progressed by Open MPI's
# progress engine (opal_progress_register, libopen-pal) like the X-RDMA layer
# (under MPICH by the program's own wait).
noinst_PROGRAMS += benchmarks/xrdma_pointer_chase
benchmarks_xrdma_pointer_chase_SOURCES = benchmarks/xrdma_pointer_chase.c benchmarks/bench_common.h \
	examples/chase_common.c examples/chase_common.h examples/xrdma_chase.h
benchmarks_xrdma_pointer_chase_CPPFLAGS = $(OSU_BENCH_CPPFLAGS) -I$(top_srcdir)/examples
benchmarks_xrdma_pointer_chase_LDADD = $(OSU_BENCH_LDADD)
if XRDMA_MPI_OPENMPI
benchmarks_xrdma_pointer_chase_LDADD += -lopen-pal
endif
benchmarks_xrdma_pointer_chase_LDFLAGS = -no-install
EXTRA_benchmarks_xrdma_pointer_chase_DEPENDENCIES = $(CHASE_IMAGES)
CHASE_IMAGES = benchmarks/xchase_native.xfn benchmarks/xchase_bitcode.xfn
# The step is the example's (examples/mpi_chase_ifunc.c), built twice.
$(CHASE_IMAGES): examples/xrdma_chase.h
benchmarks/xchase_native.xfn: examples/mpi_chase_ifunc.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=native $(IFUNC_CPPFLAGS) -o $@ $<
benchmarks/xchase_bitcode.xfn: examples/mpi_chase_ifunc.c tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && tools/xrdma-cc --emit=bitcode $(IFUNC_CPPFLAGS) -o $@ $<

# PSCW latency of plain MPI RMA, built plain and with XRDMA linked (the same
# source): benchmarks/drivers/pscw-ratio runs the two in turn; linking XRDMA must not
# slow a program that makes no X-op.
PSCW_PROGS = benchmarks/osu_pscw_latency_plain benchmarks/osu_pscw_latency_xrdma
noinst_PROGRAMS += $(PSCW_PROGS)
benchmarks_osu_pscw_latency_plain_SOURCES = benchmarks/osu_pscw_latency.c
benchmarks_osu_pscw_latency_plain_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
benchmarks_osu_pscw_latency_plain_LDADD = $(MPI_LIBS)
benchmarks_osu_pscw_latency_plain_LDFLAGS = -no-install
benchmarks_osu_pscw_latency_xrdma_SOURCES = benchmarks/osu_pscw_latency.c
benchmarks_osu_pscw_latency_xrdma_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
benchmarks_osu_pscw_latency_xrdma_LDADD = $(OSU_BENCH_LDADD)
benchmarks_osu_pscw_latency_xrdma_LDFLAGS = -no-install
EXTRA_DIST += benchmarks/drivers/pscw-ratio benchmarks/drivers/linked-ratio benchmarks/drivers/progress-thread-ratio benchmarks/drivers/knob-ratio \
	benchmarks/drivers/tls-env
# MPICH's RMA tests, plain and with XRDMA linked (benchmarks/drivers/mpich-rma
# builds them from Debian's mpich source, fetched into the build directory).
EXTRA_DIST += benchmarks/drivers/mpich-rma benchmarks/mpitestconf.h

BENCH_SUITE_IMAGES = benchmarks/osu_ifuncs.xfn $(COLD_IMAGES) $(CHASE_IMAGES)
EXTRA_DIST += benchmarks/osu_ifuncs.c
CLEANFILES += $(BENCH_SUITE_IMAGES)

# `make bench`: the whole suite over shm and tcp (benchmarks/drivers/run-bench), CSV,
# logs and what the machine was (machine.txt) in $(BENCH_OUT), then the
# charts (make plot), the table of targets (benchmarks/drivers/summary) and
# $(BENCH_OUT)/REPORT.md (make bench-report, benchmarks/drivers/report).
# `make plot` alone redraws the charts, `make bench-report` the report.
BENCH_OUT = bench-results
BENCH_SUITE_PROGS = $(OSU_LAT_PROGS:=$(EXEEXT)) $(OSU_BW_PROGS:=$(EXEEXT)) \
	benchmarks/osu_xinvoke_cold$(EXEEXT) benchmarks/osu_xget_compile$(EXEEXT) benchmarks/osu_xstream$(EXEEXT) \
	benchmarks/ucp_path_probe$(EXEEXT) benchmarks/xrdma_pointer_chase$(EXEEXT) $(PSCW_PROGS:=$(EXEEXT)) \
	$(WINCOST_PROGS:=$(EXEEXT)) benchmarks/first_xop$(EXEEXT) benchmarks/compat_msg_rate$(EXEEXT)
bench: $(BENCH_SUITE_PROGS) $(BENCH_SUITE_IMAGES) benchmarks/compat_inc.so
	@MPIRUN=$(MPIRUN) $(SHELL) $(srcdir)/benchmarks/drivers/run-bench $(abs_builddir) $(abs_srcdir) $(BENCH_OUT); \
	rc=$$?; \
	$(MAKE) $(AM_MAKEFLAGS) plot || rc=1; \
	python3 $(srcdir)/benchmarks/drivers/summary $(BENCH_OUT) || rc=1; \
	python3 $(srcdir)/apps/summary $(APPS_OUT) || rc=1; \
	$(MAKE) $(AM_MAKEFLAGS) bench-report || rc=1; \
	exit $$rc
# (The applications' table, apps/summary, from the last `make bench-apps`:
# `make bench` does not run them.)
plot-tools:
	@command -v gnuplot >/dev/null || { echo "plot: installing gnuplot-nox"; \
	  apt-get install -y -q gnuplot-nox >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && apt-get install -y -q gnuplot-nox >/dev/null; }; }
plot: plot-tools
	@python3 $(srcdir)/benchmarks/drivers/plot $(BENCH_OUT)
	@python3 $(srcdir)/apps/plot $(APPS_OUT)
bench-report:
	@python3 $(srcdir)/benchmarks/drivers/report $(BENCH_OUT) $(APPS_OUT)
# `make bench-profile`: instructions per pointer-chase hop, from callgrind
# (at a target that receives it as a message, against the predeployed AM
# handler; and run at the origin by node-local execution).
# Then instructions per operation of the applications' variants
# (apps/profile-apps, into $(APPS_OUT)/profile.csv; apps/hpcc/profile,
# into hpcc-profile.csv).
bench-profile: benchmarks/xrdma_pointer_chase$(EXEEXT) $(CHASE_IMAGES) apps
	@MPIRUN=$(MPIRUN) $(SHELL) $(srcdir)/benchmarks/drivers/profile-hop $(abs_builddir) $(abs_srcdir)
	@MPIRUN=$(MPIRUN) $(SHELL) $(srcdir)/apps/profile-apps $(abs_builddir) $(abs_srcdir) $(APPS_OUT)
	@MPIRUN=$(MPIRUN) $(SHELL) $(srcdir)/apps/hpcc/profile $(abs_builddir) $(abs_srcdir) $(APPS_OUT)
.PHONY: bench plot plot-tools bench-report bench-profile
EXTRA_DIST += benchmarks/drivers/run-bench benchmarks/drivers/record-machine benchmarks/drivers/plot \
	benchmarks/drivers/summary benchmarks/drivers/report benchmarks/drivers/profile-hop \
	benchmarks/drivers/code-footprint benchmarks/drivers/hop-batching

# What X-operations cost per rank as a job grows (`make bench-scale`,
# benchmarks/drivers/run-scale): memory, descriptors, segments, set-up time, against
# the same program with MPI_Accumulate.
noinst_PROGRAMS += benchmarks/scale
benchmarks_scale_SOURCES = benchmarks/scale.c
benchmarks_scale_CPPFLAGS = $(OSU_BENCH_CPPFLAGS)
benchmarks_scale_LDADD = $(OSU_BENCH_LDADD)
benchmarks_scale_LDFLAGS = -no-install
EXTRA_benchmarks_scale_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
# Its results go beside make bench's (BENCH_OUT): make bench's table shows
# them when they are there, and make plot draws their chart.
bench-scale: benchmarks/scale$(EXEEXT) benchmarks/osu_ifuncs.xfn
	@MPIRUN=$(MPIRUN) $(SHELL) $(srcdir)/benchmarks/drivers/run-scale $(abs_builddir) $(abs_srcdir) $(BENCH_OUT); \
	rc=$$?; \
	$(MAKE) $(AM_MAKEFLAGS) plot || rc=1; \
	$(MAKE) $(AM_MAKEFLAGS) bench-report || rc=1; \
	exit $$rc
.PHONY: bench-scale
EXTRA_DIST += benchmarks/drivers/run-scale
# The committed run: its CSV files, charts and REPORT.md (README.md links them).
EXTRA_DIST += benchmarks/results

# What a window costs to make and free, plain and with XRDMA linked
# (benchmarks/drivers/linked-ratio runs the two in turn): XRDMA's set-up waits for a
# window's first X-op.
WINCOST_PROGS = benchmarks/wincost_plain benchmarks/wincost_xrdma
noinst_PROGRAMS += $(WINCOST_PROGS)
benchmarks_wincost_plain_SOURCES = benchmarks/wincost.c
benchmarks_wincost_plain_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
benchmarks_wincost_plain_LDADD = $(MPI_LIBS)
benchmarks_wincost_plain_LDFLAGS = -no-install
benchmarks_wincost_xrdma_SOURCES = benchmarks/wincost.c
benchmarks_wincost_xrdma_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CPPFLAGS)
benchmarks_wincost_xrdma_LDADD = $(OSU_BENCH_LDADD)
benchmarks_wincost_xrdma_LDFLAGS = -no-install
# ... and what the set-up left to a window's first X-operation costs it.
noinst_PROGRAMS += benchmarks/first_xop
benchmarks_first_xop_SOURCES = benchmarks/first_xop.c
benchmarks_first_xop_CPPFLAGS = $(OSU_BENCH_CPPFLAGS)
benchmarks_first_xop_LDADD = $(OSU_BENCH_LDADD)
benchmarks_first_xop_LDFLAGS = -no-install
EXTRA_benchmarks_first_xop_DEPENDENCIES = benchmarks/osu_ifuncs.xfn
