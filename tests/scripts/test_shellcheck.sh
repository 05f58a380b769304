#!/bin/bash
# Every shell script of the tree (a file whose first line runs sh or bash)
# passes ShellCheck at severity warning, the files it sources followed (-x).
# That finds, for one, a variable used and never set (SC2154), which under
# `set -u` ends a script halfway. Excluded: SC2054 (commas inside array
# elements: our arguments are UCX lists such as UCX_TLS=sm,self).
set -u
srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
command -v shellcheck >/dev/null || { echo "skip: shellcheck is not installed (scripts/install-deps installs it)"; exit 77; }
cd "$srcdir" || exit 1
# The tree's own files (not what autoreconf and configure generate in it).
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    { echo "skip: $srcdir is not a git checkout: which files are the tree's own is not known"; exit 77; }
mapfile -t files < <(git ls-files -z | while IFS= read -r -d '' f; do
        [ -f "$f" ] && head -n 1 "$f" 2>/dev/null | grep -qE '^#! *(/bin/(ba)?sh|/usr/bin/env (ba)?sh)([[:space:]]|$)' && echo "$f"
    done)
[ ${#files[@]} -ge 20 ] || { echo "FAIL: only ${#files[@]} shell scripts found under $srcdir"; exit 1; }
if shellcheck -x -S warning -e SC2054 "${files[@]}"; then
    echo "shellcheck: ${#files[@]} scripts, no warning"
else
    echo "FAIL: shellcheck found the problems above in the tree's shell scripts"
    exit 1
fi
