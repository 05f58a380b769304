#!/bin/bash
# Scale to a full node: 64 ranks on this machine (oversubscribed), every
# rank X-operating on every other through 5 windows (benchmarks/scale, exact
# totals), over shared memory with XRDMA_EXEC=target (every X-op a message
# through the rings), in an IPC namespace of its own (a failure cannot fill
# the machine's System V table). Checks what must not grow with windows or
# peers: one plugin context per process, each image sent once per process
# pair, XRDMA's own System V segments per rank (beyond Open MPI's, measured
# by the same program with MPI_Accumulate at 8 ranks: its count per rank does
# not depend on the job's size). Then over TCP, 16 ranks X-operating on
# their two ring neighbours only: a rank's sockets beyond Open MPI's are a
# few (endpoints on demand), not one per rank.
set -uo pipefail
build=${XRDMA_TEST_BUILDDIR:?}
src=${XRDMA_TEST_SRCDIR:?}
read -ra flags <"$src/scripts/mpirun-flags"
prog=$build/benchmarks/scale
np=${XRDMA_TEST_SCALE_RANKS:-64}
# Under a sanitizer every process is several times larger and slower: 16
# ranks there (what grows per peer and per window shows at 16 as well).
[ -n "${XRDMA_TEST_SANITIZERS:-}" ] && np=${XRDMA_TEST_SCALE_RANKS:-16}
fail=0
check() {  # check CONDITION MESSAGE
    if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi
}
command -v unshare >/dev/null && unshare --ipc true 2>/dev/null ||
    { echo "SKIP: unshare --ipc is not available (a test of 64 ranks needs a System V table of its own)"; exit 77; }
run() {  # run NAME RANKS ENV... -- ARGS...: the job's CSV row and XRDMA's stats lines in $dir/NAME
    local name=$1 n=$2 env=()
    shift 2
    while [ "$1" != -- ]; do env+=(-x "$1"); shift; done
    shift
    timeout -k 10 900 unshare --ipc "${MPIRUN:-mpirun}" "${flags[@]}" "${env[@]}" -n "$n" "$prog" --csv "$@" \
        >"$dir/$name" 2>&1 || { echo "FAIL: $name exited with $?"; tail -20 "$dir/$name"; exit 1; }
}
field() {  # field FILE COLUMN: that column of the job's CSV row
    python3 - "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith(("mode,", "xrdma,", "accumulate,")))]
print(rows[-1][sys.argv[2]])
PY
}
stat() {  # stat FILE NAME max|sum: of XRDMA's counter NAME over the ranks
    awk -v n="$2" -v f="$3" '/^\[xrdma stats\]/ { for (i = 1; i < NF; ++i) if ($i == n) { v = $(i + 1);
        if (f == "max") { if (v > m) m = v } else m += v; c++ } } END { print m + 0, c + 0 }' "$1"
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Open MPI's own segments per rank: the same program with MPI_Accumulate.
run acc8 8 UCX_TLS=sm,self -- --mode accumulate --rounds 1
check "[ \"\$(field $dir/acc8 wrong)\" = 0 ]" "MPI_Accumulate version at 8 ranks: exact totals"
ompi_per_rank=$(python3 -c "print($(field "$dir/acc8" segments) / 8)")

run x$np "$np" UCX_TLS=sm,self XRDMA_EXEC=target XRDMA_STATS=1 -- --mode xrdma --rounds 1
check "[ \"\$(field $dir/x$np wrong)\" = 0 ]" "$np ranks, 5 windows, every rank to every rank: exact totals"
segs=$(field "$dir/x$np" segments)
own=$(python3 -c "print('%.2f' % ($segs / $np - $ompi_per_rank))")
echo "# System V segments on the node: $segs for $np ranks; Open MPI's own $ompi_per_rank per rank; XRDMA's $own per rank"
check "python3 -c 'import sys; sys.exit(not $own <= 4)'" "XRDMA's own System V segments per rank <= 4 ($own)"
read -r contexts nstats < <(stat "$dir/x$np" contexts max)
check "[ $nstats = $np ] && [ $contexts = 1 ]" "one plugin context per process (most: $contexts, in $nstats processes)"
read -r code_sends _ < <(stat "$dir/x$np" code_sends max)
check "[ $code_sends -le $np ]" "each image sent once per process pair: at most $np per rank, 5 windows (most: $code_sends)"

# Endpoints on demand: a ring of 16 ranks over TCP.
tcp=(UCX_TLS=tcp UCX_NET_DEVICES=lo)
run accring 16 "${tcp[@]}" -- --mode accumulate --pattern ring --rounds 1
run xring 16 "${tcp[@]}" XRDMA_EXEC=target -- --mode xrdma --pattern ring --rounds 1
check "[ \"\$(field $dir/xring wrong)\" = 0 ] && [ \"\$(field $dir/accring wrong)\" = 0 ]" "ring over TCP: exact totals"
s_acc=$(field "$dir/accring" sockets_mean) s_x=$(field "$dir/xring" sockets_mean)
echo "# sockets per rank, 16 ranks, each X-operating on 2 neighbours: Open MPI alone $s_acc, with XRDMA $s_x"
check "python3 -c 'import sys; sys.exit(not $s_x <= $s_acc + 4)'" "sockets per rank over TCP <= Open MPI's + 4 ($s_x vs $s_acc)"
exit $fail
