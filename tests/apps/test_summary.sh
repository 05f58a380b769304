#!/bin/sh
# apps/summary: without results it says so; with a run's rows it compares
# XRDMA with the best plain variant at the largest size of each target's
# transport and ranks, and reports a failed verification.
set -u
src=${XRDMA_TEST_SRCDIR:?XRDMA_TEST_SRCDIR is not set}
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail=0
out=$(python3 "$src/apps/summary" "$dir/none") || { echo "FAIL: summary failed without results"; exit 1; }
echo "$out" | grep -q "^not measured: run make bench-apps$" || { echo "FAIL: no 'not measured' line: $out"; fail=1; }

h=app,variant,transport,ranks,size,metric,value,unit,verified
{
    echo $h
    # The main size (18): xrdma 15 against the best of a2a 10 and p2p 12: 1.25x.
    echo bfs,a2a,shm,4,18,teps_median,10,TEPS,1
    echo bfs,p2p,shm,4,18,teps_median,12,TEPS,1
    echo bfs,xrdma,shm,4,18,teps_median,15,TEPS,1
    # A smaller size with a faster plain variant does not count.
    echo bfs,rma,shm,4,12,teps_median,100,TEPS,1
    echo bfs,xrdma,shm,4,12,teps_median,50,TEPS,1
    # tcp: 2x the best, but a variant failed its verification.
    echo bfs,a2a,tcp,4,18,teps_median,10,TEPS,0
    echo bfs,xrdma,tcp,4,18,teps_median,20,TEPS,1
} >"$dir/bfs.csv"
out=$(python3 "$src/apps/summary" "$dir") || { echo "FAIL: summary failed: $out"; exit 1; }
echo "$out"
echo "$out" | grep -Eq "^bfs teps_median, shm, 4 ranks: xrdma / best plain +>= 1.3x +1.25x +NO$" ||
    { echo "FAIL: shm row is not 1.25x, missed"; fail=1; }
echo "$out" | grep -Eq "^bfs teps_median, tcp, 4 ranks: xrdma / best plain +>= 1.3x +2.00x +NO$" ||
    { echo "FAIL: tcp row (2.00x, a failed verification) is not a miss"; fail=1; }
grep -q "VERIFICATION FAILED: a2a" "$dir/summary.md" || { echo "FAIL: summary.md does not name the failed variant"; fail=1; }
echo "$out" | grep -Eq "^dht insert_rate_uniform, shm, 4 ranks: .* +-  +NO$" ||
    { echo "FAIL: an application without results is not a miss"; fail=1; }
exit $fail
