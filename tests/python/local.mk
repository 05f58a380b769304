# The xrdma Python package's tests: pytest under mpirun, 2 and 3 ranks, over
# UCX shared memory and TCP (tests/python/run-pytest; one .pytest name per
# configuration). ctarget: rank 0 in Python ships a function written in
# Python to ranks that are a plain C program (tests/python/c_target.c).
# test_empty_image.sh: an uncaught load error ends the job cleanly.
# compile_cache: four ranks of one node share the compile cache of Python
# functions. test_interpreter.sh: the package imported by interpreters that
# cannot run it (no mpi4py, an mpi4py of another MPI) says which to use.
# Only when configure found Python with mpi4py, numpy, Numba and pytest.
EXTRA_DIST += tests/python/run-pytest tests/python/conftest.py tests/python/test_xops.py \
	tests/python/test_functions.py tests/python/test_chase.py tests/python/test_c_target.py \
	tests/python/c_target.c tests/python/test_install.sh tests/python/test_compile_cache.py \
	tests/python/test_interpreter.sh tests/python/test_empty_image.sh
TEST_EXTENSIONS += .pytest
PYTEST_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/python/run-pytest
AM_TESTS_ENVIRONMENT += XRDMA_TEST_PYTHON='$(PYTHON)'; export XRDMA_TEST_PYTHON;
if XRDMA_PYTHON_TESTS
check_PROGRAMS += tests/python/c_target
tests_python_c_target_SOURCES = tests/python/c_target.c
tests_python_c_target_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_python_c_target_LDADD = $(MPI_TEST_LDADD)
tests_python_c_target_LDFLAGS = -no-install
CONFIG_TESTS += \
	tests/python/xops-np2-shm.pytest tests/python/xops-np3-tcp.pytest \
	tests/python/functions-np2-shm.pytest tests/python/functions-np3-tcp.pytest \
	tests/python/chase-np2-tcp.pytest tests/python/chase-np3-shm.pytest \
	tests/python/ctarget-np3-shm.pytest tests/python/ctarget-np2-tcp.pytest \
	tests/python/compile_cache-np4-shm.pytest
PYTHON_LAYER_TESTS = tests/python/test_install.sh tests/python/test_interpreter.sh tests/python/test_empty_image.sh
TESTS += $(PYTHON_LAYER_TESTS)
endif
# No mpi4py for the MPI XRDMA is built for (MPICH: Debian's python3-mpi4py
# is built for Open MPI only): the Python tests are skipped, saying why.
EXTRA_DIST += tests/python/test_skipped.sh
if XRDMA_PYTHON_SKIPPED
PYTHON_LAYER_TESTS = tests/python/test_skipped.sh
TESTS += $(PYTHON_LAYER_TESTS)
AM_TESTS_ENVIRONMENT += XRDMA_PYTHON_SKIP='$(XRDMA_PYTHON_SKIP)'; export XRDMA_PYTHON_SKIP;
endif
