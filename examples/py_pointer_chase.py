"""py_pointer_chase: the X-RDMA pointer chase from Python, with the chase
function written in Python.

The list and the checks are those of mpi_pointer_chase.c (and
xrdma_chase.c): one random cycle through nodes_per_rank * nranks nodes
(splitmix64 + Fisher-Yates from the same seed), block-distributed over the
ranks' MPI_Win_allocate windows (nodes_per_rank "next" words, then two
counters: steps run, forwards). Rank 0 chases `depth` hops from the same
start nodes, three ways, chase by chase in turn:

  python   xrdma.xget with `chase` below, compiled by Numba into an LLVM
           bitcode image at rank 0 (@xrdma.function); it walks the owner's
           nodes in place, forwards itself to the next owner, and the last
           owner replies the final node to rank 0
  c        the same with the C function's image (mpi_chase_ifunc.xfn, built by
           xrdma-cc; skipped if not found)
  get      an mpi4py Win.Get + Win.Flush chain: one round trip per remote hop

Only rank 0 imports Numba and builds the image; the other ranks run no Python
code for a chase (they wait in a barrier, where XRDMA runs what arrives).
Every answer is checked against a sequential walk; the last line says how
many held, and the exit status is 1 if one did not.

Run: mpirun $(cat scripts/mpirun-flags) -n 3 python3 py_pointer_chase.py
(with XRDMA_LIBDIR and PYTHONPATH set for a build tree; see the README).
"""
import argparse
import os
import sys
import time

import xrdma  # before mpi4py.MPI
from mpi4py import MPI
import numpy as np

LIST_SEED = 0x5EED1234ABCD
START_SEED = 0x57A27
M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def below(state, n):
    """Uniform in [0, n), as below() in the C examples."""
    limit = M64 - M64 % n
    while True:
        state, x = splitmix64(state)
        if x < limit:
            return state, x % n


def build_list(n):
    perm = list(range(n))
    st = LIST_SEED
    for i in range(n - 1, 0, -1):
        st, j = below(st, i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    nxt = np.empty(n, dtype=np.uint64)
    for i in range(n):
        nxt[perm[i]] = perm[(i + 1) % n]
    return nxt


def start_node(i, n):
    return below(START_SEED + i * 7919, n)[1]


def walk(nxt, start, depth):
    node = start
    for _ in range(depth):
        node = int(nxt[node])
    return node


def compile_chase():
    """The chase function in Python: what examples/mpi_chase_ifunc.c does."""
    import numba
    from numba import uint64, int32
    rt = xrdma.rt

    @xrdma.function
    def chase(ctx, args, args_size):
        base, nbytes = rt.win_base(ctx)
        if args_size != 24:
            return 1
        a = numba.carray(args, 3, uint64)
        node, remaining, npr = a[0], a[1], a[2]
        w = numba.carray(base, nbytes // 8, uint64)
        if npr == 0 or nbytes // 8 < npr + 2:
            return 2  # not our window layout
        lo = uint64(rt.rank(ctx)) * npr
        if node - lo >= npr:
            return 3  # sent to the wrong rank
        while remaining > 0 and node - lo < npr:
            node = w[node - lo]
            remaining -= uint64(1)
        w[npr] += uint64(1)  # steps run here
        if remaining == 0:
            return int32(rt.reply_value(ctx, node) != 0)
        owner = node // npr
        if owner >= uint64(rt.size(ctx)):
            return 4  # corrupt list
        w[npr + uint64(1)] += uint64(1)  # forwarded
        return int32(rt.forward_value(ctx, owner, (node, remaining, npr)) != 0)
    return chase


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--nodes", type=int, default=4096, help="list nodes per rank")
    ap.add_argument("-d", "--depth", type=int, default=256, help="hops per chase")
    ap.add_argument("-r", "--reps", type=int, default=200, help="measured chases per mode")
    ap.add_argument("-w", "--warmup", type=int, default=10, help="unmeasured chases per mode first")
    ap.add_argument("--image", help="the C function's image (default: mpi_chase_ifunc.xfn beside this "
                    "script, then in $XRDMA_EXAMPLES_DIR)")
    ap.add_argument("--modes", default="python,c,get", help="comma-separated: python, c, get")
    ap.add_argument("--csv", action="store_true", help="CSV instead of the table")
    o = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size < 2:
        sys.exit("py_pointer_chase: needs at least 2 ranks")
    npr, depth = o.nodes, o.depth
    n = npr * size
    nxt = build_list(n)

    win = MPI.Win.Allocate((npr + 2) * 8, 8, comm=comm)
    mem = np.frombuffer(win.tomemory(), dtype=np.uint64)
    mem[:npr] = nxt[rank * npr:(rank + 1) * npr]
    mem[npr:] = 0

    modes = o.modes.split(",")
    fns, compile_s = {}, None
    if rank == 0:
        if "python" in modes:
            t0 = time.perf_counter()
            import numba  # noqa: F401  (imported once per program, timed apart)
            from xrdma import compiler  # noqa: F401
            t1 = time.perf_counter()
            fns["python"] = compile_chase()
            compile_s, import_s = time.perf_counter() - t1, t1 - t0
        if "c" in modes:
            here = os.path.dirname(os.path.abspath(__file__))
            cands = [o.image] if o.image else [os.path.join(d, "mpi_chase_ifunc.xfn") for d in
                                               (here, os.environ.get("XRDMA_EXAMPLES_DIR", here))]
            found = [p for p in cands if os.path.exists(p)]
            if found:
                fns["c"] = xrdma.load(found[0], "chase")
            else:
                print(f"# no C image ({', '.join(cands)}): mode c skipped")
    comm.Barrier()

    reps, warm = o.reps, o.warmup
    times = {m: [] for m in modes}  # per chase: medians, as the C benchmarks (shared machines)
    good = {m: 0 for m in modes}
    counted = {m: 0 for m in modes}
    if rank == 0:
        win.Lock_all()
        out = np.zeros(1, dtype=np.uint64)
        got = np.zeros(1, dtype=np.uint64)
        targ0 = (0, 0, MPI.UINT64_T)
        order = [m for m in modes if m == "get" or m in fns]
        for i in range(warm + reps):
            start = start_node(i, n)
            ref = walk(nxt, start, depth)
            for k in range(len(order)):
                m = order[(i + k) % len(order)]  # take turns going first
                t0 = time.perf_counter()
                node, rem = start, depth
                while rem > 0 and node < npr:  # rank 0's own nodes, every mode alike
                    node = int(mem[node])
                    rem -= 1
                if rem > 0 and m == "get":
                    while rem > 0:
                        owner = node // npr
                        if owner == 0:
                            node = int(mem[node])
                        else:
                            win.Get(got, owner, (node % npr, 1, MPI.UINT64_T))
                            win.Flush(owner)
                            node = int(got[0])
                        rem -= 1
                elif rem > 0:
                    owner = node // npr
                    out[0] = M64
                    args = np.array([node, rem, npr], dtype=np.uint64)
                    xrdma.xget(win, out, owner, fns[m], args, targ0)
                    win.Flush(owner)
                    node = int(out[0])
                dt = time.perf_counter() - t0
                if i >= warm:
                    times[m].append(dt)
                    counted[m] += 1
                    good[m] += node == ref
                elif node != ref:
                    good[m] -= 10 ** 9  # a wrong warm-up answer fails the mode
        win.Unlock_all()
    comm.Barrier()  # the targets serve the chases meanwhile
    counters = comm.gather((int(mem[npr]), int(mem[npr + 1])), root=0)

    failed = 0
    if rank == 0:
        done = [m for m in modes if counted[m]]
        us = {m: 1e6 * float(np.median(times[m])) for m in done}
        failed = any(good[m] != counted[m] for m in done) or "python" in modes and not counted["python"]
        if o.csv:
            print("mode,ranks,nodes_per_rank,depth,reps,median_us_per_chase,answers_ok")
            for m in done:
                print(f"{m},{size},{npr},{depth},{reps},{us[m]:.3f},{max(good[m], 0)}")
            if compile_s is not None:
                print(f"compile_python,{size},{npr},{depth},1,{compile_s * 1e6:.0f},1")
                print(f"import_numba,{size},{npr},{depth},1,{import_s * 1e6:.0f},1")
        else:
            print(f"# XRDMA pointer chase from Python: {size} ranks, {npr} nodes/rank, depth {depth}, "
                  f"{reps} chases (+{warm} warm-up), UCX_TLS={os.environ.get('UCX_TLS', '(default)')}")
            if compile_s is not None:
                f = fns["python"]
                how = "compiled" if f.compiled_here else "read from the compile cache (XRDMA_PY_CACHE)"
                print(f"# chase written in Python: {how}, a {len(f.image)} B bitcode image, in "
                      f"{compile_s * 1e3:.0f} ms at rank 0 (after {import_s * 1e3:.0f} ms to import Numba); "
                      f"it calls {', '.join(f.imports)}")
            for r, (steps, fwd) in enumerate(counters):
                print(f"# rank {r}: {steps} chase steps run here, {fwd} forwarded")
            for m in done:
                print(f"  {m:8s} {us[m]:10.2f} us/chase (median)")
            if "python" in us and "c" in us:
                print(f"# python / c: {us['python'] / us['c']:.3f}")
            if "python" in us and "get" in us:
                print(f"# get / python: {us['get'] / us['python']:.3f} (speedup of the Python chase)")
        print("answers checked: " + ", ".join(f"{max(good[m], 0)}/{counted[m]} {m}" for m in done) +
              (" FAILED" if failed else " ok"))
        sys.stdout.flush()
        for f in fns.values():
            f.free()
    failed = comm.bcast(failed, root=0)
    win.Free()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
