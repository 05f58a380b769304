# man: the overview page xrdma(7); the other pages are installed with the
# layer they document (ucx_plugin, tools, ompi_ext/xrdma/man.mk).
dist_man_MANS += man/xrdma.7
