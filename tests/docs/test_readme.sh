#!/bin/sh
# README.md as a front page: its first section is the Quick start, whose
# commands are exactly ./scripts/quickstart and ./scripts/test (both there and
# executable); and every line of its C examples is a line of a source file the
# README names (`tests/....c`, `examples/....c`), so the example stays what
# really builds.
set -u
srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
readme="$srcdir/README.md"
[ -f "$readme" ] || { echo "FAIL: README.md is missing" >&2; exit 1; }
fail=0

first=$(grep -m1 '^## ' "$readme")
[ "$first" = "## Quick start" ] || { echo "FAIL: the first section of README.md is '$first', not '## Quick start'" >&2; fail=1; }

# The commands of the Quick start's first code block, comments dropped.
cmds=$(awk '/^## Quick start/ { q = 1; next }
            q && /^## / { exit }
            q && /^```/ { if (inblock) exit; inblock = 1; next }
            q && inblock { sub(/#.*/, ""); gsub(/^[ \t]+|[ \t]+$/, ""); if ($0 != "") print }' "$readme")
want=$(printf '%s\n' ./scripts/quickstart ./scripts/test)
if [ "$cmds" != "$want" ]; then
    echo "FAIL: the Quick start's commands are not exactly ./scripts/quickstart and ./scripts/test:" >&2
    echo "$cmds" | sed 's/^/    /' >&2
    fail=1
fi
for s in quickstart test; do
    [ -x "$srcdir/scripts/$s" ] || { echo "FAIL: scripts/$s is missing or not executable" >&2; fail=1; }
done

# The C examples: every non-empty line must be a line (trimmed) of a named source.
sources=$(grep -oE '`(tests|examples)/[A-Za-z0-9_/.-]+\.c`' "$readme" | tr -d '`' | sort -u)
[ -n "$sources" ] || { echo "FAIL: README.md names no source file its examples come from" >&2; fail=1; }
tmp=$(mktemp) || exit 99
trap 'rm -f "$tmp"' EXIT
for f in $sources; do
    [ -f "$srcdir/$f" ] || { echo "FAIL: README.md names $f, which does not exist" >&2; fail=1; continue; }
    sed 's/^[[:space:]]*//; s/[[:space:]]*$//' "$srcdir/$f" >>"$tmp"
done
srclist=$(echo $sources)
lines=$(awk '/^```c$/ { c = 1; next } /^```/ { c = 0; next } c { gsub(/^[ \t]+|[ \t]+$/, ""); if ($0 != "") print }' "$readme")
[ -n "$lines" ] || { echo "FAIL: README.md has no C example" >&2; fail=1; }
echo "$lines" | while IFS= read -r l; do
    grep -qxF -- "$l" "$tmp" || { echo "FAIL: README.md's example line is in none of $srclist: $l" >&2; echo x; }
done | grep -q x && fail=1

[ $fail -eq 0 ] && echo "test_readme: Quick start and examples hold"
exit $fail
