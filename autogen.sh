#!/bin/sh
# Regenerate the build system (configure, Makefile.in).
set -e
cd "$(dirname "$0")"
mkdir -p config m4
autoreconf --install --force --warnings=no-portability
