# apps/dht: the distributed hash table (apps/dht/README.md), one program
# with every variant, and the XRDMA variant's functions; a broken copy of
# them for the test that shows verification catches it (tests/apps).
APPS_PROGS += apps/dht/dht
apps_dht_dht_SOURCES = apps/dht/dht.c apps/dht/dht.h apps/dht/dht_table.h apps/dht/keys.c apps/dht/verify.c \
	apps/dht/dht_a2a.c apps/dht/dht_rma.c apps/dht/dht_xrdma.c $(APPS_COMMON)
apps_dht_dht_CPPFLAGS = $(APPS_CPPFLAGS)
apps_dht_dht_LDADD = $(APPS_LDADD)
apps_dht_dht_LDFLAGS = -no-install
EXTRA_apps_dht_dht_DEPENDENCIES = apps/dht/dht_ifunc.xfn
APPS_IMAGES += apps/dht/dht_ifunc.xfn
DHT_MUTANTS = apps/dht/dht_ifunc_drop.xfn
CLEANFILES += $(DHT_MUTANTS)
apps/dht/dht_ifunc.xfn: apps/dht/dht_ifunc.c apps/dht/dht_table.h apps/common/mix.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(APPS_XRDMA_CC) -I$(srcdir)/apps/dht -o $@ $(srcdir)/apps/dht/dht_ifunc.c
apps/dht/dht_ifunc_drop.xfn: apps/dht/dht_ifunc.c apps/dht/dht_table.h apps/common/mix.h tools/xrdma-cc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(APPS_XRDMA_CC) -DDHT_MUTANT_DROP -I$(srcdir)/apps/dht -o $@ $(srcdir)/apps/dht/dht_ifunc.c
EXTRA_DIST += apps/dht/README.md apps/dht/bench apps/dht/targets apps/dht/dht_ifunc.c
