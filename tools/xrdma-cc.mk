# xrdma-cc: see issue 2
