#!/bin/bash
# `import xrdma` under interpreters that cannot run XRDMA ends in an
# ImportError that says which Python to use, and crashes nothing: an
# interpreter without mpi4py (a venv, as pyenv or conda would be), an
# mpi4py reporting another MPI vendor, an mpi4py whose extension module is
# linked against another MPI library (never loaded: it would crash). The
# package is the source tree's with the _config.py make wrote (naming the
# configured Python, $XRDMA_TEST_PYTHON); the libraries are the build's.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
python=${XRDMA_TEST_PYTHON:?}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then echo "ok - $2"; else echo "FAIL - $2"; fail=1; fi; }
export XRDMA_LIBDIR=$build/.libs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

mkdir -p "$tmp/pkg" && cp -r "$src/python/xrdma" "$tmp/pkg/" && cp "$build/python/xrdma/_config.py" "$tmp/pkg/xrdma/" ||
    exit 99

# A sanitizer build's libraries need its runtime first (tests/python/run-pytest).
rt=$(ldd "$build/tests/python/c_target" 2>/dev/null | awk '/lib[at]san\.so/ {print $3; exit}')
# try NAME PYTHON PYTHONPATH: import xrdma; its output in $tmp/NAME.out, status in $tmp/NAME.rc.
try() {
    env ${rt:+LD_PRELOAD="$rt"} PYTHONPATH="$3" timeout -k 5 120 "$2" -c 'import xrdma; print("imported")' >"$tmp/$1.out" 2>&1
    echo $? >"$tmp/$1.rc"
}
# refused NAME: exit status 1 and an ImportError from xrdma (no signal, no hang).
refused() { [ "$(cat "$tmp/$1.rc")" = 1 ] && grep -q '^ImportError: xrdma: ' "$tmp/$1.out"; }
says() { grep -q -F -- "$2" "$tmp/$1.out" || { sed 's/^/    /' "$tmp/$1.out"; false; }; }

try good "$python" "$tmp/pkg"
check "grep -qx imported '$tmp/good.out'" "the configured Python imports the package"

# A Python without mpi4py: a venv of the same interpreter without its site packages.
"$python" -m venv --without-pip "$tmp/venv" >/dev/null 2>&1 || exit 99
try venv "$tmp/venv/bin/python3" "$tmp/pkg"
check "refused venv" "a Python without mpi4py is refused"
check "says venv 'has no mpi4py'" "... saying what it lacks"
check "says venv 'This is $tmp/venv/bin/python3'" "... naming the interpreter"
check "says venv 'Run XRDMA programs with $python'" "... and the one to use"

# An mpi4py reporting another vendor (a pure-Python stand-in first on the path).
mkdir -p "$tmp/fake/mpi4py" && touch "$tmp/fake/mpi4py/__init__.py"
printf 'def get_vendor():\n    return ("MPICH", (4, 0, 2))\n' >"$tmp/fake/mpi4py/MPI.py"
try vendor "$python" "$tmp/fake:$tmp/pkg"
check "refused vendor" "an mpi4py of another vendor is refused"
check "says vendor 'is built for MPICH 4.0.2, XRDMA for Open MPI'" "... naming both"
check "says vendor '$tmp/fake/mpi4py'" "... and where that mpi4py is"

# An mpi4py whose extension is linked against another MPI library: refused
# before it is loaded.
ext=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
mkdir -p "$tmp/other/mpi4py" "$tmp/lib" && touch "$tmp/other/mpi4py/__init__.py"
echo 'int MPI_Init(int *c, char ***v) { (void)c; (void)v; return 0; }' >"$tmp/lib/mpich.c"
echo 'extern int MPI_Init(int *, char ***); void *PyInit_MPI(void) { MPI_Init(0, 0); return 0; }' >"$tmp/lib/ext.c"
cc -shared -fPIC -o "$tmp/lib/libmpich.so.12" -Wl,-soname,libmpich.so.12 "$tmp/lib/mpich.c" &&
    cc -shared -fPIC -o "$tmp/other/mpi4py/MPI$ext" "$tmp/lib/ext.c" -L"$tmp/lib" -Wl,--no-as-needed -l:libmpich.so.12 ||
    exit 99
try library "$python" "$tmp/other:$tmp/pkg"
check "refused library" "an mpi4py linked against another MPI library is refused"
check "says library 'built against libmpich.so.12 (MPICH), XRDMA against libmpi.so.40 (Open MPI)'" "... naming both"

# Without _config.py (a source tree), Debian's Python is named if it has mpi4py.
rm "$tmp/pkg/xrdma/_config.py"
if env -u PYTHONPATH /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
    try venv2 "$tmp/venv/bin/python3" "$tmp/pkg"
    check "refused venv2 && says venv2 'Run XRDMA programs with /usr/bin/python3'" "... without _config.py too"
fi
exit $fail
