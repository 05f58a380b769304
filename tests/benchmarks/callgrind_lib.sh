# Sourced by the tests of the benchmarks' callgrind readers
# (benchmarks/drivers/code-footprint, benchmarks/drivers/hop-batching): their source
# directory, a scratch directory, and the header of the profiles they write.
set -u
src=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
# The lines a profile made with --dump-instr=yes starts with.
callgrind_header() {
    printf '# callgrind format\nversion: 1\npositions: instr line\nevents: Ir\n\n'
}
