#!/bin/sh
# docs/ARCHITECTURE.md names functions as `name()` (or `Class::name()`) so
# that a reader can grep for them: every one must exist in the sources, as
# code (a call or a definition), not only in a comment. A rename that leaves
# the document behind fails here.
set -u

srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
doc="$srcdir/docs/ARCHITECTURE.md"
[ -f "$doc" ] || { echo "FAIL: $doc is missing" >&2; exit 1; }

names=$(grep -oE '`[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*\(\)`' "$doc" | tr -d '`()' | sort -u)
if [ -z "$names" ]; then
    echo "FAIL: no \`name()\` found in $doc" >&2
    exit 1
fi

dirs=""
for d in common ucx_plugin ompi_ext tools examples benchmarks apps tests; do dirs="$dirs $srcdir/$d"; done

# in_code REGEX: a line of a source file matches REGEX and is not a comment line.
in_code()
{
    grep -rhE --include='*.c' --include='*.cc' --include='*.h' -- "$1" $dirs 2>/dev/null |
        grep -vqE '^[[:space:]]*(//|/?\*)' 2>/dev/null
}

failures=0
count=0
for n in $names; do
    count=$((count + 1))
    fn=${n##*::}
    if ! in_code "(^|[^A-Za-z0-9_])$fn[[:space:]]*\\("; then
        echo "FAIL: docs/ARCHITECTURE.md names $n(), which no source file calls or defines" >&2
        failures=$((failures + 1))
        continue
    fi
    case $n in
    *::*)
        cls=${n%::*}
        cls=${cls##*::}
        if ! in_code "(struct|class)[[:space:]]+$cls([^A-Za-z0-9_]|$)"; then
            echo "FAIL: docs/ARCHITECTURE.md names $n(), but no struct or class $cls exists" >&2
            failures=$((failures + 1))
        fi
        ;;
    esac
done

if [ "$failures" -ne 0 ]; then
    echo "test_architecture: $failures of $count names not found" >&2
    exit 1
fi
echo "test_architecture: all $count names exist in the sources"
exit 0
