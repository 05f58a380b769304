# Shell functions for an application's bench driver (apps/<app>/bench),
# which apps/run-bench-apps calls as `bench BUILDDIR SRCDIR OUTDIR`. Source
# this file, call apps_init, then apps_run / apps_run_multihost for each
# configuration: each appends the program's CSV rows (apps/README.md) to
# OUTDIR/<app>.csv (one header) and keeps its report in a log beside it.
#
# Environment (for every application):
#   MPIRUN           mpirun (default mpirun)
#   APPS_TLS         transports (default "shm tcp")
#   APPS_RANKS       rank counts per transport (default "2 4 8")
#   APPS_MULTIHOST   0 skips the 2 hosts x 2 ranks run (default 1)
#   APPS_TIMEOUT     seconds per run (default 1800)
#   APPS_ARGS_<app>  more arguments for every run of <app>

# apps_init BUILDDIR SRCDIR OUTDIR APP: the CSV file starts with its header.
apps_init() {
    APPS_BUILD=${1:?} APPS_SRC=${2:?} APPS_OUT=${3:?} APPS_APP=${4:?}
    APPS_PROG="$APPS_BUILD/apps/$APPS_APP/$APPS_APP"
    APPS_CSV="$APPS_OUT/$APPS_APP.csv"
    APPS_FAILED=0
    mkdir -p "$APPS_OUT" || exit 2
    read -ra APPS_FLAGS <"$APPS_SRC/scripts/mpirun-flags"
    local extra="APPS_ARGS_$APPS_APP"
    read -ra APPS_EXTRA <<<"${!extra:-}"
    echo "app,variant,transport,ranks,size,metric,value,unit,verified" >"$APPS_CSV"
    rm -f "$APPS_OUT/$APPS_APP"-*.log  # (a previous run's)
}

# _apps_log TAG: the log of the next run with TAG (a second run of the same
# transport and ranks, at another size, gets its own).
_apps_log() {
    local log="$APPS_OUT/$APPS_APP-$1.log" i=1
    while [ -e "$log" ]; do
        i=$((i + 1))
        log="$APPS_OUT/$APPS_APP-$1-$i.log"
    done
    : >"$log"
    echo "$log"
}

# _apps_keep LOG RC T0 WHAT: append the rows of a run's output (LOG.csv) and
# say how it went.
_apps_keep() {
    local log=$1 rc=$2 t0=$3
    if [ "$rc" -eq 0 ] && grep -q "^$APPS_APP," "$log.csv"; then
        grep "^$APPS_APP," "$log.csv" >>"$APPS_CSV"
        echo "$((SECONDS - t0)) s"
    elif [ "$rc" -eq 77 ]; then
        echo "skipped: $(grep -m1 SKIP "$log.csv" "$log" 2>/dev/null | sed 's/^[^:]*://')"
    else
        # A failed verification (exit 3) still reports its rows, marked.
        grep "^$APPS_APP," "$log.csv" >>"$APPS_CSV" 2>/dev/null
        echo "FAILED (exit $rc, $((SECONDS - t0)) s): see $log"
        tail -5 "$log" | sed 's/^/    /'
        APPS_FAILED=1
    fi
    rm -f "$log.csv"
}

# apps_run TLS NP ARGS...: the program with NP ranks over UCX shared memory
# (shm) or TCP on loopback (tcp).
apps_run() {
    local tls=$1 np=$2 env
    shift 2
    case $tls in
        shm) env=(-x UCX_TLS=sm,self) ;;
        tcp) env=(-x UCX_TLS=tcp -x UCX_NET_DEVICES=lo) ;;
        *) echo "apps_run: unknown transport $tls" >&2; return 2 ;;
    esac
    local log t0=$SECONDS cwd rc
    log=$(_apps_log "$tls-np$np")
    printf '%-6s %-6s np %d ... ' "$APPS_APP" "$tls" "$np"
    # Ranks start away from the images: only rank 0 reads them.
    cwd=$(mktemp -d) || exit 2
    (cd "$cwd" && timeout -k 10 "${APPS_TIMEOUT:-1800}" "${MPIRUN:-mpirun}" "${APPS_FLAGS[@]}" "${env[@]}" \
        -n "$np" "$APPS_PROG" --csv --transport "$tls" "$@" "${APPS_EXTRA[@]}") >"$log.csv" 2>"$log"
    rc=$?
    rm -rf "$cwd"
    _apps_keep "$log" "$rc" "$t0"
}

# apps_run_multihost ARGS...: 2 hosts x 2 ranks (network namespaces,
# tests/multihost/run-multihost): UCX shared memory within a host, TCP
# between hosts; transport "mh2x2" in the rows. Skipped where namespaces
# cannot be made.
apps_run_multihost() {
    [ "${APPS_MULTIHOST:-1}" = 0 ] && return 0
    local log t0=$SECONDS rc
    log=$(_apps_log mh2x2-np4)
    printf '%-6s %-6s np %d ... ' "$APPS_APP" mh2x2 4
    XRDMA_TEST_BUILDDIR=$APPS_BUILD XRDMA_TEST_SRCDIR=$APPS_SRC \
        XRDMA_MH_ARGS="--csv --transport mh2x2 $* ${APPS_EXTRA[*]}" \
        timeout -k 10 "${APPS_TIMEOUT:-1800}" "$APPS_SRC/tests/multihost/run-multihost" "app-$APPS_APP.mhtest" \
        >"$log.csv" 2>"$log"
    rc=$?
    _apps_keep "$log" "$rc" "$t0"
}
