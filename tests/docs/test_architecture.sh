#!/bin/sh
# docs/ARCHITECTURE.md is the map of the sources; this keeps it true.
# - Every function it names as `name()` (or `Class::name()`) and every knob
#   (XRDMA_*) exists in the sources, as code and not only in a comment, so
#   that a reader can grep for it (tests/docs/check-names).
# - Every folder its tables name exists; it stays a map (no table cell over
#   200 characters: details live in the files' opening comments) and points
#   at nothing outside the repository (no absolute path).
# - The include rules it states between layers hold: common/ includes
#   nothing of ucx_plugin/ or ompi_ext/; no file of ucx_plugin/ includes
#   mpi.h (or any other header of an MPI) or a header of ompi_ext/; the MPI
#   layer's core (ompi_ext/xrdma/core) includes nothing of the entry points'
#   folder (ompi_ext/xrdma/c).
set -u
srcdir=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
doc="$srcdir/docs/ARCHITECTURE.md"
[ -f "$doc" ] || { echo "FAIL: $doc is missing" >&2; exit 1; }
if ! grep -qE '`[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*\(\)`' "$doc"; then
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

# The include rules. An include is followed as the compiler would: from the
# including file's folder, then from the include folders its layer is
# compiled with (Makefile.am's AM_CPPFLAGS and PLUGIN_CPPFLAGS,
# ompi_ext/local.mk's MPIX_XRDMA_CPPFLAGS). One that leads nowhere there is
# still a breach when a forbidden folder holds a file of that name: with
# that folder on the path it would be the one included.
sources() { find "$@" -type f \( -name '*.[ch]' -o -name '*.cc' -o -name '*.hh' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.inc' \); }
# includes FILE: the names FILE includes, one a line ("x.h" and <x.h> alike).
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$1"; }
# resolve FILE NAME ROOT...: the file NAME leads to from FILE with ROOTs
# on the path, as an absolute path without ".."; empty if none.
resolve()
{
    file=$1 name=$2
    shift 2
    for root in "$(dirname "$file")" "$@"; do
        if [ -f "$root/$name" ]; then
            readlink -f "$root/$name"
            return
        fi
    done
}
# held_in NAME DIR...: a file of one of DIRs is NAME (its path ends in it).
held_in()
{
    case $1 in */../* | ../*) return 1 ;; esac
    [ -n "$(find "$@" -type f -path "*/$1" 2>/dev/null | head -n 1)" ]
}
# An MPI's own headers, which only the MPI layer may include.
is_mpi_header()
{
    case $1 in
    mpi.h | mpi-ext.h | mpif.h | mpif-*.h | mpi_portable_platform.h | mpi_f08*.h | \
        opal_config.h | ompi_config.h | opal/* | ompi/* | openmpi/* | mpich/*) return 0 ;;
    esac
    return 1
}

top=$(readlink -f "$srcdir")
plugin="$top/ucx_plugin"
common="$top/common"
ompi="$top/ompi_ext"
mpi="$ompi/xrdma"
checked=0

# layer DIR "ROOT..." "FORBIDDEN..." MPI WHY: no file of DIR, compiled with
# ROOTs on the include path, includes a file of a FORBIDDEN folder, nor (MPI
# "no") an MPI's header; WHY ends each complaint.
layer()
{
    roots=$2 forbidden=$3 mpi_ok=$4 why=$5
    for f in $(sources "$1"); do
        for i in $(includes "$f"); do
            checked=$((checked + 1))
            if [ "$mpi_ok" = no ] && is_mpi_header "$i"; then
                fail "${f#"$top"/} includes $i, a header of MPI: $why"
                continue
            fi
            # shellcheck disable=SC2086
            r=$(resolve "$f" "$i" $roots)
            for d in $forbidden; do
                case $r in
                "$d"/*) fail "${f#"$top"/} includes $i (${r#"$top"/}), of ${d#"$top"/}/: $why" ;;
                "") held_in "$i" "$d" && fail "${f#"$top"/} includes $i, a header of ${d#"$top"/}/: $why" ;;
                esac
            done
        done
    done
}
layer "$common" "$common/include" "$plugin $ompi" no "common/ includes nothing of the layers above"
layer "$plugin" "$plugin $plugin/include $common/include" "$ompi" no "the plugin knows nothing of MPI"
layer "$mpi/core" "$mpi/include $mpi/core $plugin/include $common/include" "$mpi/c" yes \
    "the core includes nothing of the entry points' folder; they call it through core/core_api.h"
[ "$checked" -gt 0 ] || fail "no include found in common/, ucx_plugin/ or ompi_ext/xrdma/core"

if [ "$problems" -ne 0 ]; then
    echo "test_architecture: $problems problems with the folders, the map's form or the include rules" >&2
    exit 1
fi
echo "test_architecture: $(echo "$folders" | wc -l) folders exist, the tables are short, $checked includes follow the layers"
exit 0
