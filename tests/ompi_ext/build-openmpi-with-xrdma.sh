#!/bin/bash
# Build Debian's Open MPI 4.1.4 (apt-get source openmpi) with ompi_ext/xrdma
# as the MPI extension "xrdma", then build tests/ompi_ext/mpi_ext_xput_xget.c
# with that Open MPI's mpicc (<mpi.h> + <mpi-ext.h> only) and run it with its
# mpirun on 2 and 3 ranks. Exit 0 only if every step passes. See README.md.
#
# Usage: build-openmpi-with-xrdma.sh [--workdir DIR] [--reuse] [--jobs N]
#                                     [--xrdma-src DIR]
#   --workdir DIR   everything goes there (default $XRDMA_OMPI_WORKDIR or
#                   /tmp/xrdma-ompi): src/ (Open MPI source, build/ inside),
#                   ompi/ and xrdma/ (install prefixes), xrdma-build/, app/,
#                   logs/
#   --reuse         keep what an earlier run left in DIR: the source tree and
#                   the Open MPI build; autogen and configure (in place) run
#                   again only if the extension's configure.m4, Makefile.am
#                   files or man pages changed; make and make install still
#                   run, incrementally (a few minutes)
#   --jobs N        make -jN (default 2); builds run under nice -n 19
#   --xrdma-src DIR the XRDMA source tree (default: the one holding this script)
# Runs as root on Debian 12 (installs missing build packages with apt-get).
set -uo pipefail
# In braces so that bash reads the whole script before running any of it:
# editing it during a run does not change that run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
xrdma_src=$(cd "$here/../.." && pwd)
work=${XRDMA_OMPI_WORKDIR:-/tmp/xrdma-ompi}
reuse=0
jobs=2
while [ $# -gt 0 ]; do
    case $1 in
        --workdir) work=$2; shift 2 ;;
        --workdir=*) work=${1#*=}; shift ;;
        --reuse) reuse=1; shift ;;
        --jobs) jobs=$2; shift 2 ;;
        --jobs=*) jobs=${1#*=}; shift ;;
        --xrdma-src) xrdma_src=$(cd "$2" && pwd); shift 2 ;;
        --xrdma-src=*) xrdma_src=$(cd "${1#*=}" && pwd); shift ;;
        -h|--help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$work" && work=$(cd "$work" && pwd) || exit 2

ompi_version=4.1.4
src_parent=$work/src
ompi_src=$src_parent/openmpi-$ompi_version
ompi_build=$ompi_src/build
ompi_prefix=$work/ompi
xrdma_build=$work/xrdma-build
xrdma_prefix=$work/xrdma
app_dir=$work/app
logs=$work/logs
pmix_dir=/usr/lib/x86_64-linux-gnu/pmix2
mkdir -p "$logs" "$app_dir"

# ---- step bookkeeping: name, seconds, result; the log of a failed step ----
steps=()
t_start=$(date +%s)
step_log=
run_step() {  # run_step NAME COMMAND...: runs COMMAND with output to logs/NAME.log
    local name=$1; shift
    step_log=$logs/$name.log
    local t0
    t0=$(date +%s)
    printf '[%s] %-16s ... ' "$(date +%H:%M:%S)" "$name"
    if "$@" >"$step_log" 2>&1; then
        local dt=$(( $(date +%s) - t0 ))
        steps+=("$(printf '%-16s %6ss  ok' "$name" "$dt")")
        echo "ok (${dt}s)"
    else
        local rc=$? dt=$(( $(date +%s) - t0 ))
        steps+=("$(printf '%-16s %6ss  FAILED' "$name" "$dt")")
        echo "FAILED (${dt}s, exit $rc)"
        echo "---- last lines of $step_log ----"
        tail -n 40 "$step_log"
        echo "----"
        summary
        echo "FAILED at step '$name' (log: $step_log)"
        exit 1
    fi
}
skip_step() {
    steps+=("$(printf '%-16s %6s   skipped (%s)' "$1" - "$2")")
    printf '[%s] %-16s ... skipped (%s)\n' "$(date +%H:%M:%S)" "$1" "$2"
}
summary() {
    echo "==== build-openmpi-with-xrdma: $work ===="
    printf '%s\n' "${steps[@]}"
    echo "total $(( $(date +%s) - t_start ))s"
}
quiet_nice() { nice -n 19 "$@"; }

echo "XRDMA source: $xrdma_src"
echo "work dir:     $work (reuse=$reuse, make -j$jobs)"

# ---- 1. packages: only the missing ones ----
# Open MPI from Debian's source: autogen needs flex (+ autotools, perl), the
# configure line needs libevent, PMIx, UCX and hwloc; XRDMA needs the rest.
packages() {
    local want=(flex autoconf automake libtool m4 perl dpkg-dev make gcc g++ pkg-config
                libevent-dev libpmix-dev libucx-dev libhwloc-dev zlib1g-dev
                openmpi-bin libopenmpi-dev llvm-14-dev clang-14 libclang-14-dev libgtest-dev)
    local missing=() p
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then echo "all present: ${want[*]}"; return 0; fi
    echo "installing: ${missing[*]}"
    [ "$(id -u)" -eq 0 ] || { echo "not root: cannot install ${missing[*]}"; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; }
}
run_step packages packages

# ---- 2. Open MPI source with Debian's patches ----
get_source() {
    if [ -d "$ompi_src" ]; then
        echo "removing the old $ompi_src"
        rm -rf "$ompi_src"
    fi
    mkdir -p "$src_parent" && cd "$src_parent" || return 1
    rm -f openmpi_*.dsc openmpi_*.tar.*
    apt-get source openmpi || { apt-get update && apt-get source openmpi; } || return 1
    [ -f "$ompi_src/configure.ac" ] || { echo "no $ompi_src after apt-get source (not Open MPI $ompi_version?)"; ls; return 1; }
    local v
    v=$(sed -n 's/^major=//p;s/^minor=//p;s/^release=//p' "$ompi_src/VERSION" | paste -sd.)
    [ "$v" = "$ompi_version" ] || { echo "apt-get source gave Open MPI $v, not $ompi_version"; return 1; }
}
if [ $reuse -eq 1 ] && [ -f "$ompi_src/configure.ac" ]; then
    skip_step source "reusing $ompi_src"
else
    reuse=0   # a fresh source tree needs every later step
    run_step source get_source
fi

# ---- 3. XRDMA: build and install (the core library the extension links) ----
build_xrdma() {
    if [ ! -x "$xrdma_src/configure" ]; then
        echo "no configure in $xrdma_src: running autogen.sh"
        "$xrdma_src/autogen.sh" || return 1
    fi
    mkdir -p "$xrdma_build" && cd "$xrdma_build" || return 1
    if [ ! -f config.status ] || [ "$(sed -n 's/^prefix = //p' Makefile 2>/dev/null)" != "$xrdma_prefix" ]; then
        quiet_nice "$xrdma_src/configure" --prefix="$xrdma_prefix" || return 1
    fi
    # make install, restricted to what gets installed: the libraries,
    # xrdma-cc, headers and man pages, not examples, benchmarks and tests.
    quiet_nice make -j"$jobs" install-exec && quiet_nice make install-data || return 1
    for f in lib/libmpix_xrdma_core.so include/mpiext_xrdma_c.h bin/xrdma-cc; do
        [ -e "$xrdma_prefix/$f" ] || { echo "missing after make install: $xrdma_prefix/$f"; return 1; }
    done
}
run_step xrdma build_xrdma

# ---- 4. the extension into the Open MPI tree ----
ext_dst=$ompi_src/ompi/mpiext/xrdma
ext_stamp=$work/ext-build-files.sha256
ext_build_files() { (cd "$1" && sha256sum configure.m4 Makefile.am c/Makefile.am && ls c/*.3 2>/dev/null); }
copy_ext() {
    rm -rf "$ext_dst" && cp -a "$xrdma_src/ompi_ext/xrdma" "$ext_dst" || return 1
    # cp -a keeps modification times: make rebuilds only what changed.
    ls -lR "$ext_dst"
}
run_step copy-extension copy_ext

# ---- 5-6. autogen (Debian's steps) and configure ----
autogen() {
    cd "$ompi_src" || return 1
    (cd config && autom4te --language=m4sh opal_get_version.m4sh -o opal_get_version.sh) || return 1
    quiet_nice ./autogen.pl --force || return 1
    grep 'ompi_mpiext_list' config/autogen_found_items.m4
    grep -q 'm4_define(\[ompi_mpiext_list\], \[.*xrdma' config/autogen_found_items.m4 ||
        { echo "autogen.pl did not pick up ompi/mpiext/xrdma"; return 1; }
}
configure_ompi() {
    # With --reuse, configure again in place: make then rebuilds only what
    # the new configuration changes.
    [ $reuse -eq 1 ] && [ -f "$ompi_build/config.status" ] || rm -rf "$ompi_build"
    mkdir -p "$ompi_build" && cd "$ompi_build" || return 1
    quiet_nice ../configure --prefix="$ompi_prefix" \
        --enable-mpi-ext=xrdma --with-xrdma="$xrdma_prefix" \
        --disable-mpi-fortran --disable-oshmem --with-ucx \
        --with-hwloc=external --with-libevent=external --with-pmix="$pmix_dir" || return 1
    grep -q '^#define OMPI_HAVE_MPI_EXT_XRDMA 1' ompi/include/mpi-ext.h ||
        { echo "ompi/include/mpi-ext.h does not enable xrdma:"; cat ompi/include/mpi-ext.h; return 1; }
}
if [ $reuse -eq 1 ] && [ -f "$ompi_build/config.status" ] && [ -f "$ext_stamp" ] &&
   ext_build_files "$ext_dst" | cmp -s - "$ext_stamp"; then
    skip_step autogen "extension build files unchanged"
    skip_step configure "reusing $ompi_build"
else
    rm -f "$ext_stamp"
    run_step autogen autogen
    run_step configure configure_ompi
    ext_build_files "$ext_dst" >"$ext_stamp"
fi

# ---- 7. make, make install ----
make_ompi() {
    cd "$ompi_build" && quiet_nice make -j"$jobs" && quiet_nice make install
}
run_step make-install make_ompi

# ---- 8. what the installed Open MPI offers ----
check_install() {
    local ext_h=$ompi_prefix/include/mpi-ext.h
    grep -n 'XRDMA\|xrdma' "$ext_h" || { echo "$ext_h does not mention xrdma"; return 1; }
    grep -q '^#define OMPI_HAVE_MPI_EXT_XRDMA 1' "$ext_h" || { echo "no OMPI_HAVE_MPI_EXT_XRDMA in $ext_h"; return 1; }
    local hdr
    hdr=$(find "$ompi_prefix/include" -name mpiext_xrdma_c.h | head -1)
    [ -n "$hdr" ] || { echo "mpiext_xrdma_c.h not installed"; return 1; }
    echo "installed $hdr"
    local info
    info=$(env -u LD_LIBRARY_PATH "$ompi_prefix/bin/ompi_info") || { echo "ompi_info fails"; return 1; }
    grep -i 'MPI extensions' <<<"$info"
    grep -i 'MPI extensions' <<<"$info" | grep -qw xrdma || { echo "ompi_info does not list xrdma"; return 1; }
    # The extension's man pages (c/*.3), installed and found by man.
    local page name
    for page in "$ext_dst"/c/*.3; do
        [ -e "$page" ] || continue
        name=$(basename "$page" .3)
        MANPATH=$ompi_prefix/share/man man -w "$name" >/dev/null 2>&1 ||
            { echo "man page $name not installed in $ompi_prefix/share/man"; return 1; }
        echo "man page $name: $(MANPATH=$ompi_prefix/share/man man -w "$name")"
    done
    # The core's PMPI interposers must precede libmpi: -lmpix_xrdma_core
    # comes before -lmpi in the wrapper's link line.
    local link
    link=$("$ompi_prefix/bin/mpicc" --showme:link) || return 1
    echo "mpicc --showme:link: $link"
    case " $link " in
        *" -lmpix_xrdma_core "*" -lmpi "*) ;;
        *) echo "mpicc does not link -lmpix_xrdma_core before -lmpi"; return 1 ;;
    esac
    local dyn syms
    dyn=$(readelf -d "$ompi_prefix/lib/libmpi.so") && syms=$(nm -D --defined-only "$ompi_prefix/lib/libmpi.so") || return 1
    grep -E 'NEEDED.*xrdma|RUNPATH|RPATH' <<<"$dyn"
    grep -q 'NEEDED.*libmpix_xrdma_core' <<<"$dyn" || { echo "libmpi.so does not link libmpix_xrdma_core"; return 1; }
    grep -E ' T MPIX_' <<<"$syms" || { echo "libmpi.so does not define the MPIX_ functions"; return 1; }
    grep -qw 'MPIX_Xget' <<<"$syms" && grep -qw 'MPIX_Xput' <<<"$syms" ||
        { echo "libmpi.so lacks MPIX_Xget or MPIX_Xput"; return 1; }
}
run_step check-install check_install

# ---- 9. one XRDMA program built with that mpicc ----
build_app() {
    cd "$app_dir" || return 1
    rm -f mpi_ops.xfn mpi_ext_xput_xget
    "$xrdma_prefix/bin/xrdma-cc" -o mpi_ops.xfn "$xrdma_src/tests/mpi/ifuncs/mpi_ops.c" || return 1
    # Nothing but the wrapper: no XRDMA -I, -L or -l.
    (set -x; "$ompi_prefix/bin/mpicc" -O2 -Wall -o mpi_ext_xput_xget \
        "$xrdma_src/tests/ompi_ext/mpi_ext_xput_xget.c") || return 1
    readelf -d mpi_ext_xput_xget | grep -E 'NEEDED|RUNPATH|RPATH'
    # The core must precede libmpi, and every Open MPI library must be this
    # Open MPI's (the system's has the same sonames).
    local needed deps lib
    needed=$(readelf -d mpi_ext_xput_xget | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    case " $needed" in
        *" libmpix_xrdma_core.so."*" libmpi.so."*) ;;
        *) echo "needed libraries in the wrong order: $needed"; return 1 ;;
    esac
    deps=$(env -u LD_LIBRARY_PATH ldd ./mpi_ext_xput_xget) || return 1
    echo "ldd:"; grep -E 'mpi|xrdma|open-(pal|rte)|ucx_ifunc' <<<"$deps"
    for lib in libmpi.so libopen-rte.so libopen-pal.so; do
        grep -q "=> $ompi_prefix/lib/$lib" <<<"$deps" ||
            { echo "$lib is not loaded from $ompi_prefix/lib"; return 1; }
    done
}
run_step build-app build_app

run_app() {  # run_app NP
    cd "$app_dir" || return 1
    local flags
    read -ra flags <"$xrdma_src/scripts/mpirun-flags"
    # Only this Open MPI: its mpirun and orted, no other Open MPI's settings.
    env -u OPAL_PREFIX -u LD_LIBRARY_PATH PATH="$ompi_prefix/bin:$PATH" \
        timeout -k 10 300 "$ompi_prefix/bin/mpirun" --prefix "$ompi_prefix" "${flags[@]}" -np "$1" \
        ./mpi_ext_xput_xget mpi_ops.xfn || return 1
}
run_step run-np2 run_app 2
run_step run-np3 run_app 3
cat "$logs/run-np2.log" "$logs/run-np3.log" | grep -E 'comes from|PASS|rank' | sed 's/^/  /'

summary
echo "PASS: Open MPI $ompi_version with --enable-mpi-ext=xrdma in $ompi_prefix"
exit 0
}
