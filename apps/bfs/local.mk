# apps/bfs: the Graph500-style BFS (apps/bfs/README.md), one program with
# every variant, and the XRDMA variant's function; two broken copies of it
# for the tests that show validation catches them (tests/apps).
APPS_PROGS += apps/bfs/bfs
apps_bfs_bfs_SOURCES = apps/bfs/bfs.c apps/bfs/bfs.h apps/bfs/bfs_claim.h apps/bfs/kronecker.c apps/bfs/graph.c \
	apps/bfs/validate.c apps/bfs/bfs_a2a.c apps/bfs/bfs_p2p.c apps/bfs/bfs_rma.c apps/bfs/bfs_xrdma.c $(APPS_COMMON)
apps_bfs_bfs_CPPFLAGS = $(APPS_CPPFLAGS)
apps_bfs_bfs_LDADD = $(APPS_LDADD)
# A real executable (no libtool wrapper): it finds its image beside itself.
apps_bfs_bfs_LDFLAGS = -no-install
EXTRA_apps_bfs_bfs_DEPENDENCIES = apps/bfs/bfs_ifunc.xfn
APPS_IMAGES += apps/bfs/bfs_ifunc.xfn
BFS_MUTANTS = apps/bfs/bfs_ifunc_drop.xfn apps/bfs/bfs_ifunc_twice.xfn
CLEANFILES += $(BFS_MUTANTS)
apps/bfs/bfs_ifunc.xfn: apps/bfs/bfs_ifunc.c apps/bfs/bfs_claim.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(APPS_XRDMA_CC) -I$(srcdir)/apps/bfs -o $@ $(srcdir)/apps/bfs/bfs_ifunc.c
apps/bfs/bfs_ifunc_drop.xfn: apps/bfs/bfs_ifunc.c apps/bfs/bfs_claim.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(APPS_XRDMA_CC) -DBFS_MUTANT_DROP -I$(srcdir)/apps/bfs -o $@ $(srcdir)/apps/bfs/bfs_ifunc.c
apps/bfs/bfs_ifunc_twice.xfn: apps/bfs/bfs_ifunc.c apps/bfs/bfs_claim.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(APPS_XRDMA_CC) -DBFS_MUTANT_TWICE -I$(srcdir)/apps/bfs -o $@ $(srcdir)/apps/bfs/bfs_ifunc.c
EXTRA_DIST += apps/bfs/README.md apps/bfs/bench apps/bfs/targets apps/bfs/bfs_ifunc.c
