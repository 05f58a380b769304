#!/bin/sh
# The reader's pages: README.md, the user guide (docs/guide/), the examples'
# index and the applications' report. Every function they name as `name()`
# and every knob (XRDMA_*) must exist in the sources (tests/docs/check-names),
# and the guide must have its pages.
set -u
srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
pages=$(ls "$srcdir"/docs/guide/[0-9]-*.md 2>/dev/null)
if [ "$(echo "$pages" | grep -c .)" -lt 6 ]; then
    echo "FAIL: docs/guide/ has fewer than its 6 numbered pages: $pages" >&2
    exit 1
fi
# Each page the guide's index lists exists, and each page is listed.
for p in $pages; do
    grep -q "($(basename "$p"))" "$srcdir/docs/guide/README.md" ||
        { echo "FAIL: docs/guide/README.md does not link $(basename "$p")" >&2; exit 1; }
done
# Every relative link of these pages leads to a file or folder of the tree.
for doc in "$srcdir/README.md" "$srcdir/docs/guide/README.md" $pages "$srcdir/examples/README.md"; do
    dir=$(dirname "$doc")
    for l in $(grep -oE '\]\([^)#[:space:]]+' "$doc" | sed 's/^](//' | grep -vE '^[a-z]+:'); do
        [ -e "$dir/$l" ] || { echo "FAIL: ${doc#"$srcdir"/} links $l, which does not exist" >&2; exit 1; }
    done
done
# shellcheck disable=SC2086
exec sh "$srcdir/tests/docs/check-names" "$srcdir/README.md" "$srcdir/docs/guide/README.md" $pages \
    "$srcdir/examples/README.md" "$srcdir/docs/APPLICATIONS.md"
