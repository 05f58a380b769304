include tools/xrdma-cc.mk
include tools/xrdma_info.mk
