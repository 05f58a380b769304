#!/bin/sh
# docs/ARCHITECTURE.md names functions as `name()` (or `Class::name()`) so
# that a reader can grep for them: every one must exist in the sources, as
# code (a call or a definition), not only in a comment, and so must every
# knob (XRDMA_*) it names. A rename that leaves the document behind fails
# here (tests/docs/check-names).
set -u
srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
doc="$srcdir/docs/ARCHITECTURE.md"
[ -f "$doc" ] || { echo "FAIL: $doc is missing" >&2; exit 1; }
if ! grep -qE '`[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*\(\)`' "$doc"; then
    echo "FAIL: no \`name()\` found in $doc" >&2
    exit 1
fi
exec sh "$srcdir/tests/docs/check-names" "$doc"
