#!/bin/sh
# docs/ARCHITECTURE.md is the map of the sources; this keeps it true.
# - Every function it names as `name()` (or `Class::name()`) and every knob
#   (XRDMA_*) exists in the sources, as code and not only in a comment, so
#   that a reader can grep for it (tests/docs/check-names).
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

sh "$srcdir/tests/docs/check-names" "$doc" || exit 1

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
