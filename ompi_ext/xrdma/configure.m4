# -*- shell-script -*-
#
# XRDMA MPI extension: MPIX_Xput, MPIX_Xget, MPIX_Xinvoke (+ MPIX_Rx*),
# MPIX_Ifunc_load*, MPIX_Xprogress. Copy this folder to ompi/mpiext/xrdma in
# an Open MPI 4.1 source tree, run autogen.pl, then configure with
#   --enable-mpi-ext=xrdma --with-xrdma=PREFIX   (or XRDMA_PREFIX=PREFIX)
# where PREFIX is an XRDMA installation (`make install` of XRDMA).
#
# The MPIX_* entry points (c/) go into libmpi like every extension's; the
# work is done by XRDMA's installed core library, libmpix_xrdma_core, which
# libmpi links (no second copy of the core). The core also interposes
# MPI_Init*, MPI_Finalize and MPI_Win_* through PMPI, so it must come before
# libmpi in a program's symbol search order: the wrappers (mpicc ...) put
# -lmpix_xrdma_core ahead of -lmpi in every link.

# OMPI_MPIEXT_xrdma_CONFIG([action-if-found], [action-if-not-found])
# -----------------------------------------------------------
AC_DEFUN([OMPI_MPIEXT_xrdma_CONFIG],[
    AC_CONFIG_FILES([ompi/mpiext/xrdma/Makefile])
    AC_CONFIG_FILES([ompi/mpiext/xrdma/c/Makefile])

    AC_ARG_WITH([xrdma],
        [AS_HELP_STRING([--with-xrdma=DIR],
                        [XRDMA installation prefix for the xrdma MPI extension (DIR/include/mpiext_xrdma_c.h, DIR/lib/libmpix_xrdma_core); default: $XRDMA_PREFIX])])

    OPAL_VAR_SCOPE_PUSH([xrdma_prefix xrdma_happy xrdma_LDFLAGS_save xrdma_LIBS_save])
    OMPI_MPIEXT_XRDMA_CPPFLAGS=
    OMPI_MPIEXT_XRDMA_LIBS=
    OMPI_MPIEXT_XRDMA_MANS=
    xrdma_happy=0

    AS_IF([test "$ENABLE_xrdma" = "1" || test "$ENABLE_EXT_ALL" = "1"], [
        AS_IF([test "$with_xrdma" = "no"],
              [xrdma_prefix=],
              [test -n "$with_xrdma" && test "$with_xrdma" != "yes"],
              [xrdma_prefix=$with_xrdma],
              [xrdma_prefix=$XRDMA_PREFIX])

        AC_MSG_CHECKING([for the XRDMA installation])
        AS_IF([test -z "$xrdma_prefix"],
              [AC_MSG_RESULT([not given (--with-xrdma=DIR or XRDMA_PREFIX)])],
              [test ! -r "$xrdma_prefix/include/mpiext_xrdma_c.h"],
              [AC_MSG_RESULT([no ($xrdma_prefix/include/mpiext_xrdma_c.h missing)])],
              [AC_MSG_RESULT([$xrdma_prefix])
               xrdma_happy=1])

        # The core library: found and providing the interface the entry
        # points call. Its own dependencies (libmpi.so.40 among them: the
        # one being built replaces it at run time) need not resolve here.
        AS_IF([test $xrdma_happy -eq 1], [
            xrdma_LDFLAGS_save=$LDFLAGS
            xrdma_LIBS_save=$LIBS
            LDFLAGS="$LDFLAGS -L$xrdma_prefix/lib -Wl,--allow-shlib-undefined"
            LIBS="-lmpix_xrdma_core $LIBS"
            AC_MSG_CHECKING([for xrdma_mpi_xop in $xrdma_prefix/lib/libmpix_xrdma_core])
            AC_LINK_IFELSE([AC_LANG_CALL([], [xrdma_mpi_xop])],
                           [AC_MSG_RESULT([yes])],
                           [AC_MSG_RESULT([no])
                            xrdma_happy=0])
            LDFLAGS=$xrdma_LDFLAGS_save
            LIBS=$xrdma_LIBS_save
        ])

        AS_IF([test $xrdma_happy -eq 1 && \
               ! cmp -s "$srcdir/ompi/mpiext/xrdma/c/mpiext_xrdma_c.h" "$xrdma_prefix/include/mpiext_xrdma_c.h"],
              [AC_MSG_WARN([$xrdma_prefix/include/mpiext_xrdma_c.h differs from this extension's c/mpiext_xrdma_c.h: the XRDMA installation and ompi/mpiext/xrdma come from different versions])])

        AS_IF([test $xrdma_happy -eq 1], [
            OMPI_MPIEXT_XRDMA_CPPFLAGS="-I$xrdma_prefix/include"
            OMPI_MPIEXT_XRDMA_LIBS="-L$xrdma_prefix/lib -lmpix_xrdma_core"
            OMPI_MPIEXT_XRDMA_MANS=`cd "$srcdir/ompi/mpiext/xrdma/c" && ls *.3 2>/dev/null | tr '\n' ' '`
            # libmpi finds the core without LD_LIBRARY_PATH (ompi_info ...).
            OMPI_LIBMPI_EXTRA_LDFLAGS="$OMPI_LIBMPI_EXTRA_LDFLAGS -Wl,-rpath -Wl,$xrdma_prefix/lib"
            # Wrapper link lines are "user args, linker flags, -lmpi": the
            # core (PMPI interposers) lands before libmpi in the program's
            # needed list. The -L also gets an rpath in the wrappers.
            OPAL_WRAPPER_FLAGS_ADD([LDFLAGS], [-L$xrdma_prefix/lib -lmpix_xrdma_core])
        ], [test "$ENABLE_xrdma" = "1"], [
            AC_MSG_WARN([The xrdma MPI extension was requested but XRDMA was not found.])
            AC_MSG_WARN([Give its installation prefix: --with-xrdma=DIR or XRDMA_PREFIX=DIR.])
            AC_MSG_ERROR([Cannot continue])
        ])
    ])

    AC_SUBST([OMPI_MPIEXT_XRDMA_CPPFLAGS])
    AC_SUBST([OMPI_MPIEXT_XRDMA_LIBS])
    AC_SUBST([OMPI_MPIEXT_XRDMA_MANS])
    AS_IF([test $xrdma_happy -eq 1], [$1], [$2])
    OPAL_VAR_SCOPE_POP
])
