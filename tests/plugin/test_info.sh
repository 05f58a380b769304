#!/bin/sh
# xrdma_info reports the toolchain it was built with, the UCX transports of
# this machine, and documents every XRDMA_* knob the code reads: a knob added
# to a layer's table (common/, ucx_plugin/, ompi_ext/xrdma/core/knobs.cc)
# without an entry in -c output or the man page fails.
set -u

builddir=${XRDMA_TEST_BUILDDIR:?XRDMA_TEST_BUILDDIR is not set}
srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
info="$builddir/tools/xrdma_info"
failures=0

fail()
{
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# run NAME ARGS...: run xrdma_info, keep stdout in $out, its status in $rc.
run()
{
    out=$("$info" "$@" 2>"$tmp_err")
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "xrdma_info $* exited with $rc: $(cat "$tmp_err")"
    fi
}

# expect WHAT REGEX: $out must have a line matching REGEX.
expect()
{
    if ! printf '%s\n' "$out" | grep -Eq -- "$2"; then
        fail "$1: no line matches '$2' in:"
        printf '%s\n' "$out" | sed 's/^/    /' >&2
    fi
}

if [ ! -x "$info" ]; then
    echo "FAIL: $info is missing (not built?)" >&2
    exit 1
fi
tmp_err=$(mktemp) || exit 1
trap 'rm -f "$tmp_err"' EXIT

# -v: versions built against and running.
run -v
expect "-v UCX version" '^# UCX version 1\.13(\.|[[:space:]])'
expect "-v UCX built against" 'built against 1\.13'
expect "-v LLVM version" '^# LLVM version 14\.'
expect "-v XRDMA version" '^# XRDMA version [0-9]'
expect "-v hwloc version" '^# hwloc version [0-9]'
# The MPI the build is for (configure --with-mpi), and whether the flush
# skip can take effect with it.
case ${XRDMA_MPI:-openmpi} in
    mpich) expect "-v MPI" '^# MPI: built for MPICH 4\..*XRDMA_FLUSH_SKIP has no effect' ;;
    *) expect "-v MPI" '^# MPI: built for Open MPI 4\.' ;;
esac

# No option means -v -d: versions and transports.
run
expect "no option shows versions" '^# UCX version 1\.13'
expect "no option shows transports" '^tcp/[^[:space:]]+'

# -d: tcp always exists (at least on lo), and one shared-memory transport.
run -d
expect "-d tcp" '^tcp/[^[:space:]]+'
expect "-d shared memory" '^(posix|sysv|cma)/[^[:space:]]+'

# -t: a topology with at least one PU and the binding of this process.
run -t
expect "-t PUs" '^#[[:space:]]+PUs[[:space:]]+[1-9]'
expect "-t binding" '^#[[:space:]]+bound to[[:space:]]+[0-9]'

# -c: every knob named in the config table, with its meaning; and the man
# page documents each of them too.
knob_tables="$srcdir/common/knobs.cc $srcdir/ucx_plugin/run/knobs.cc $srcdir/ompi_ext/xrdma/core/knobs.cc"
for table in $knob_tables; do
    grep -q '"XRDMA_[A-Z0-9_]*"' "$table" || fail "no XRDMA_* knob found in $table"
done
knobs=$(cat $knob_tables | grep -o '"XRDMA_[A-Z0-9_]*"' | tr -d '"' | sort -u)
run -c
for knob in $knobs; do
    expect "-c lists $knob" "^$knob="
    # The line just before NAME=value is the default, and before it the meaning.
    meaning=$(printf '%s\n' "$out" | grep -B2 "^$knob=" | head -n 1)
    case "$meaning" in
        "# "?*) ;;
        *) fail "-c: no meaning line before $knob (got '$meaning')" ;;
    esac
    if ! grep -q "^\.BR $knob " "$srcdir/man/xrdma_info.1"; then
        fail "man/xrdma_info.1 does not document $knob in ENVIRONMENT"
    fi
done

# -c shows the value in effect when the environment sets one.
out=$(XRDMA_LOG_LEVEL=debug "$info" -c 2>"$tmp_err")
rc=$?
[ "$rc" -eq 0 ] || fail "XRDMA_LOG_LEVEL=debug xrdma_info -c exited with $rc"
expect "-c current value" '^XRDMA_LOG_LEVEL=debug$'
expect "-c marks environment" '^# default: warn \(current value set in the environment\)$'

# -a: everything, once.
run -a
expect "-a versions" '^# UCX version'
expect "-a devices" '^tcp/'
expect "-a topology" '^# Topology'
expect "-a config" '^XRDMA_LOG_LEVEL='

# -h goes to stdout and succeeds.
run -h
expect "-h usage" '^Usage: '

# A bad option fails, with the usage on stderr and nothing on stdout.
out=$("$info" -Z 2>"$tmp_err")
rc=$?
if [ "$rc" -eq 0 ]; then
    fail "xrdma_info -Z exited with 0"
fi
if ! grep -q '^Usage: ' "$tmp_err"; then
    fail "xrdma_info -Z printed no usage on stderr"
fi
if [ -n "$out" ]; then
    fail "xrdma_info -Z wrote to stdout: $out"
fi
"$info" stray-argument >/dev/null 2>&1 && fail "xrdma_info stray-argument exited with 0"

if [ "$failures" -ne 0 ]; then
    echo "test_info: $failures check(s) failed" >&2
    exit 1
fi
echo "test_info: all checks passed"
exit 0
