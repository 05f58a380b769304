# xrdma_info
