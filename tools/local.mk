include tools/xrdma-cc.mk
include tools/xrdma_info.mk
include tools/cmake.mk
