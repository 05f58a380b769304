#!/bin/bash
# Prepare what the heterogeneous test needs to run an aarch64 target process
# on an x86-64 machine: qemu-user-static and the aarch64 cross toolchain on
# the host, and an arm64 sysroot (glibc, libstdc++, UCX, LLVM and their
# libraries, UCX and LLVM headers) unpacked from Debian's arm64 packages.
#
#   setup-aarch64-sysroot.sh [--check] [DIR]
#
# DIR (default $XRDMA_AARCH64_CACHE, else ~/.cache/xrdma/aarch64) receives
# sysroot/ and a stamp; a second run with the same package list does nothing,
# so CI can call it every time. --check only tells (exit 0 ready, 1 not) and
# installs nothing. Exit 77: this machine cannot get the packages (no apt, not
# root and no sudo, arm64 packages not found); the reason is printed.
set -uo pipefail
check_only=0
[ "${1:-}" = --check ] && { check_only=1; shift; }
dir=${1:-${XRDMA_AARCH64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xrdma/aarch64}}
sysroot=$dir/sysroot
host_pkgs=(qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross)
# Runtime libraries of the target and their dependencies (Debian 12), plus
# the headers (libucx-dev, llvm-14-dev: LLVM's config headers differ by arch).
arm_pkgs=(libc6 libgcc-s1 gcc-12-base libstdc++6
          libucx0 libucx-dev libnuma1 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200
          libllvm14 llvm-14-dev libedit2 libbsd0 libmd0 libffi8 libtinfo6 libxml2 libicu72
          liblzma5 libz3-4 zlib1g)
stamp_want="$(printf '%s\n' "${arm_pkgs[@]}" | sha256sum | cut -c1-16)"
# Packages needed since (libcrypto: SHA-256 of images) are unpacked on top of
# an existing sysroot under their own stamp: a sysroot shared by several
# checkouts of different ages is then never deleted and rebuilt under another.
extra_pkgs=(libssl3 libssl-dev)
extra_want="$(printf '%s\n' "${extra_pkgs[@]}" | sha256sum | cut -c1-16)"

skip() { echo "setup-aarch64-sysroot: SKIP: $*"; exit 77; }

host_ready()
{
    command -v qemu-aarch64-static >/dev/null && command -v aarch64-linux-gnu-g++ >/dev/null &&
        [ -d /usr/aarch64-linux-gnu/include ]
}
sysroot_ready()
{
    [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp_want" ] && [ "$(cat "$dir/stamp-extra" 2>/dev/null)" = "$extra_want" ]
}

if [ $check_only = 1 ]; then
    host_ready && sysroot_ready && { echo "$sysroot"; exit 0; }
    exit 1
fi
host_ready && sysroot_ready && { echo "setup-aarch64-sysroot: ready in $sysroot"; exit 0; }

start=$(date +%s)
command -v apt-get >/dev/null || skip "no apt-get on this machine"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || skip "not root and no password-less sudo: cannot install ${host_pkgs[*]}"
    SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
updated=0
update() { [ $updated = 1 ] || { $SUDO apt-get update -qq && updated=1; }; }

if ! host_ready; then
    update || skip "apt-get update failed"
    $SUDO apt-get install -y -qq --no-install-recommends "${host_pkgs[@]}" >/dev/null ||
        skip "cannot install ${host_pkgs[*]}"
fi
# unpack DEBS PKG...: download the arm64 packages into DEBS, unpack them into
# the sysroot, make absolute symlinks inside them relative to it.
unpack()
{
    local debs=$1
    shift
    mkdir -p "$debs" || exit 1
    (cd "$debs" && apt-get download -qq "${@/%/:arm64}") || skip "cannot download the arm64 packages ($*)"
    for p in "$@"; do
        deb=$(ls "$debs/${p}_"*_arm64.deb 2>/dev/null | tail -n 1)
        [ -n "$deb" ] || skip "arm64 package $p was not downloaded"
        dpkg -x "$deb" "$sysroot" || exit 1
    done
    # Absolute symlinks inside the packages (e.g. libLLVM-14.so) point into
    # the host: make them relative to the sysroot.
    find "$sysroot" -type l -lname '/*' | while read -r l; do
        t=$(readlink "$l")
        ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$sysroot$t")" "$l"
    done
    rm -rf "$debs"
}
if ! sysroot_ready; then
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        $SUDO dpkg --add-architecture arm64 || skip "dpkg --add-architecture arm64 failed"
        updated=0
    fi
    update || skip "apt-get update failed"
    if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp_want" ]; then
        rm -rf "$sysroot" "$dir/stamp-extra"
        mkdir -p "$sysroot"
        unpack "$dir/debs" "${arm_pkgs[@]}"
        rm -f "$sysroot"/usr/lib/llvm-14/lib/*.a  # static LLVM: 400 MB nobody links
        echo "$stamp_want" >"$dir/stamp"
    fi
    unpack "$dir/debs-extra" "${extra_pkgs[@]}"
    echo "$extra_want" >"$dir/stamp-extra"
fi
echo "setup-aarch64-sysroot: ready in $sysroot ($(( $(date +%s) - start )) s)"
