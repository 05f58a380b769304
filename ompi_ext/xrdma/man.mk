# Man pages of the MPI layer: one page per MPIX_* function, next to the
# functions as in an Open MPI mpiext (the MPIX_Rx* and the other
# MPIX_Ifunc_* pages are .so links), and xrdma_ifunc(3), the target-side
# API of injected functions. Included from ompi_ext/local.mk.
dist_man_MANS += \
	ompi_ext/xrdma/c/MPIX_Xput.3 ompi_ext/xrdma/c/MPIX_Rxput.3 \
	ompi_ext/xrdma/c/MPIX_Xget.3 ompi_ext/xrdma/c/MPIX_Rxget.3 \
	ompi_ext/xrdma/c/MPIX_Xinvoke.3 ompi_ext/xrdma/c/MPIX_Rxinvoke.3 \
	ompi_ext/xrdma/c/MPIX_Ifunc_load.3 ompi_ext/xrdma/c/MPIX_Ifunc_load_mem.3 \
	ompi_ext/xrdma/c/MPIX_Ifunc_free.3 ompi_ext/xrdma/c/MPIX_Xprogress.3 \
	man/xrdma_ifunc.3
