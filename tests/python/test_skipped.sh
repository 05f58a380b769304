#!/bin/bash
# Stands for the Python tests where configure found no mpi4py for the MPI
# XRDMA is built for (tests/python/local.mk): skipped, saying why.
echo "skip: the xrdma Python package and its tests: ${XRDMA_PYTHON_SKIP:-no mpi4py for this MPI}"
exit 77
