# The installed tree works for users (mpicc and mpicxx -lmpix_xrdma, pkg-config, CMake, man).
TESTS += tests/install/test_install.sh
CLEANFILES += .stage-install.lock
EXTRA_DIST += tests/install/test_install.sh tests/install/stage-install.sh tests/install/hello_xrdma.c tests/install/sum_ifunc.c \
	tests/install/cmake/CMakeLists.txt tests/install/cmake-cxx/CMakeLists.txt
