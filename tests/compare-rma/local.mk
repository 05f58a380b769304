# scripts/compare-rma: plain MPI RMA programs behave alike with XRDMA linked,
# and the script notices a program that does not.
TESTS += tests/compare-rma/test_compare_rma.sh
EXTRA_DIST += tests/compare-rma/test_compare_rma.sh tests/compare-rma/differs/linked.c \
	tests/compare-rma/programs/cas_counter.c tests/compare-rma/programs/get_lock.c \
	tests/compare-rma/programs/many_windows.c tests/compare-rma/programs/pscw_accumulate.c \
	tests/compare-rma/programs/put_fence.c tests/compare-rma/programs/window_churn.c
