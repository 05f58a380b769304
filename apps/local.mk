# apps: existing SPMD applications, measured whole (one folder each).
include apps/hpcc/local.mk
