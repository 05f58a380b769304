#!/bin/sh
# docs/ARCHITECTURE.md is the map of the sources; this keeps it true.
# - It names functions as `name()` (or `Class::name()`) so that a reader can
#   grep for them: every one must exist in the sources, as code (a call or a
#   definition), not only in a comment. A rename that leaves the document
#   behind fails here.
# - Every folder its tables name exists; it stays a map (no table cell over
#   200 characters: details live in the files' opening comments) and points
#   at nothing outside the repository (no absolute path).
# - The include rules it states between layers hold: the MPI layer's core
#   includes nothing of the entry points' folder (ompi_ext/xrdma/c), and no
#   file of the plugin includes mpi.h or a header of ompi_ext.
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

problems=0
fail() { echo "FAIL: $*" >&2; problems=$((problems + 1)); }

# The folders the tables name (a first cell's `path/`).
folders=$(grep -E '^\| `' "$doc" | cut -d'|' -f2 | grep -oE '`[A-Za-z0-9_./-]+/`' | tr -d '`' | sort -u)
[ -n "$folders" ] || fail "docs/ARCHITECTURE.md has no table of folders"
for f in $folders; do
    [ -d "$srcdir/$f" ] || fail "docs/ARCHITECTURE.md names the folder $f, which does not exist"
done
long=$(awk -F'|' '/^\|/ { for (i = 2; i < NF; i++) if (length($i) > 202) print NR }' "$doc")
for n in $long; do fail "docs/ARCHITECTURE.md line $n: a table cell over 200 characters (say it in the file's opening comment)"; done
grep -nE '(^|[[:space:]`(])/[A-Za-z]' "$doc" >&2 && fail "docs/ARCHITECTURE.md names an absolute path: something outside the repository"

# includes FILE: the names FILE includes, one a line ("x.h" and <x.h> alike).
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$1"; }
mpi="$srcdir/ompi_ext/xrdma"
for f in $(find "$mpi/core" -name '*.[ch]' -o -name '*.cc'); do
    for i in $(includes "$f"); do
        case $i in ../c/* | */c/*) fail "${f#$srcdir/} includes $i, of the entry points' folder" ;; esac
        if [ -e "$mpi/c/$i" ] && [ ! -e "$mpi/core/$i" ]; then
            fail "${f#$srcdir/} includes $i, of the entry points' folder (ompi_ext/xrdma/c): the core has core_api.h"
        fi
    done
done
for f in $(find "$srcdir/ucx_plugin" -name '*.h' -o -name '*.cc'); do
    for i in $(includes "$f"); do
        case $i in
        mpi.h | mpi-ext.h | *ompi_ext*) fail "${f#$srcdir/} includes $i: the plugin knows nothing of MPI" ;;
        *) for d in c core include; do
               [ -e "$mpi/$d/$i" ] && fail "${f#$srcdir/} includes $i, a header of the MPI layer (ompi_ext/xrdma/$d)"
           done ;;
        esac
    done
done

if [ "$problems" -ne 0 ]; then
    echo "test_architecture: $problems problems with the folders, the map's form or the include rules" >&2
    exit 1
fi
echo "test_architecture: $(echo "$folders" | wc -l) folders exist, the tables are short, the include rules hold"
exit 0
