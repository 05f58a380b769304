# python: the xrdma package (mpi4py windows, numpy buffers, functions written
# in Python via Numba), installed into $(pythondir) = $libdir/pythonX.Y/
# site-packages when configure found a python3 with mpi4py and numpy.
# _config.py records where the C libraries were installed and the Python
# configure chose (named by the package when another interpreter imports
# it); from a build tree the package finds the libraries through
# XRDMA_LIBDIR (tests/python/run-pytest).
XRDMA_PY_SOURCES = python/xrdma/__init__.py python/xrdma/_lib.py python/xrdma/_interpreter.py \
	python/xrdma/_elf.py python/xrdma/errors.py python/xrdma/raised.py python/xrdma/ifunc.py \
	python/xrdma/ops.py python/xrdma/image.py python/xrdma/rt.py python/xrdma/compiler.py \
	python/xrdma/fingerprint.py python/xrdma/cache.py python/xrdma/knobs.py \
	python/xrdma/_uncaught.py
# benchmarks/drivers/py-first-call: the first call of a Python function on a node's
# ranks, with and without the compile cache (docs/guide/2-shipping.md).
EXTRA_DIST += $(XRDMA_PY_SOURCES) examples/py_pointer_chase.py benchmarks/drivers/py-first-call
if XRDMA_PYTHON
xrdmapydir = $(pythondir)/xrdma
xrdmapy_DATA = $(XRDMA_PY_SOURCES)
nodist_xrdmapy_DATA = python/xrdma/_config.py
python/xrdma/_config.py: Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && printf '%s\n' \
	  '"""Written by make: where the XRDMA libraries were installed, and the Python they were built for."""' \
	  'LIBDIR = "$(libdir)"' 'PYTHON = "$(PYTHON)"' > $@
CLEANFILES += python/xrdma/_config.py
endif
