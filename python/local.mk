# python: the xrdma package (mpi4py windows, numpy buffers, functions written
# in Python via Numba), installed into $(pythondir) = $libdir/pythonX.Y/
# site-packages when configure found a python3 with mpi4py and numpy.
# _config.py records where the C libraries were installed; from a build tree
# the package finds them through XRDMA_LIBDIR (tests/python/run-pytest).
XRDMA_PY_SOURCES = python/xrdma/__init__.py python/xrdma/_lib.py python/xrdma/errors.py \
	python/xrdma/ifunc.py python/xrdma/ops.py python/xrdma/image.py python/xrdma/rt.py \
	python/xrdma/compiler.py python/xrdma/_uncaught.py
EXTRA_DIST += $(XRDMA_PY_SOURCES) examples/py_pointer_chase.py
if XRDMA_PYTHON
xrdmapydir = $(pythondir)/xrdma
xrdmapy_DATA = $(XRDMA_PY_SOURCES)
nodist_xrdmapy_DATA = python/xrdma/_config.py
python/xrdma/_config.py: Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && printf '%s\n' '"""Written by make: where the XRDMA libraries were installed."""' \
	  'LIBDIR = "$(libdir)"' > $@
CLEANFILES += python/xrdma/_config.py
endif
