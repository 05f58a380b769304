#!/bin/sh
# Install what `make fuzz` needs (Debian/Ubuntu): clang 14 and its
# compiler-rt runtimes (libFuzzer, ASan, UBSan).
set -e
have() {
    command -v clang++-14 >/dev/null 2>&1 &&
        ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1
}
if have; then
    echo "clang-14 and libFuzzer are installed"
    exit 0
fi
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends clang-14 libclang-rt-14-dev
have
