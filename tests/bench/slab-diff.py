#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which slab caches grew between two copies of /proc/slabinfo.

    tests/bench/slab-diff.py [--per N] BEFORE AFTER [BEFORE2 AFTER2]

For tests/bench/objmem's copies (OBJMEM_SLABINFO, written by
tests/scenarios/bench_profile.sh with PROF_OP=objmem as
<set>.slab.qp.0 and <set>.slab.qp.1, the same for mr): per cache that
grew, the objects in use, their bytes (objects times object size) and the
slab pages behind them, each divided by N (the objects created, e.g.
--per 1000 for 1000 QPs), and the totals. With a second pair (another
set's), both side by side and their difference. Boot the guest with
slab_nomerge to see every cache by its own name (otherwise caches of
one size share one, named after the first).
"""
import argparse
import signal
import sys

PAGE = 4096


def read(path):
    """Cache name -> (objects in use, object size, pages of its slabs)."""
    caches = {}
    with open(path) as f:
        for line in f:
            if line.startswith(("slabinfo", "#")):
                continue
            head, _, rest = line.partition(":")
            p = head.split()
            slabdata = rest.split("slabdata")[-1].split() if "slabdata" in rest else []
            if len(p) < 6:
                continue
            active, objsize, pages_per_slab = int(p[1]), int(p[3]), int(p[5])
            num_slabs = int(slabdata[1]) if len(slabdata) > 1 else 0
            caches[p[0]] = (active, objsize, num_slabs * pages_per_slab)
    return caches


def growth(before, after):
    """Cache name -> (objects, bytes, page bytes) grown."""
    g = {}
    for name, (n1, size, pages1) in after.items():
        n0, _, pages0 = before.get(name, (0, size, 0))
        if n1 != n0 or pages1 != pages0:
            g[name] = (n1 - n0, (n1 - n0) * size, (pages1 - pages0) * PAGE)
    return g


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped to head
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per", type=float, default=1.0, help="divide by this many objects created")
    ap.add_argument("files", nargs="+", metavar="FILE")
    args = ap.parse_args()
    if len(args.files) not in (2, 4):
        ap.error("two files (before, after), or four (two sets)")
    sets = [growth(read(args.files[i]), read(args.files[i + 1])) for i in range(0, len(args.files), 2)]
    names = sorted(set().union(*sets), key=lambda n: -max(abs(s.get(n, (0, 0, 0))[1]) for s in sets))
    per = args.per
    hdr = f"{'cache':28s}" + "".join(f" {'objs':>8s} {'bytes':>9s} {'pages B':>9s}" for _ in sets)
    if len(sets) == 2:
        hdr += f" {'bytes diff':>10s}"
    print(f"per {per:g} objects" + (": first set, second set" if len(sets) == 2 else ""))
    print(hdr)
    totals = [[0.0, 0.0, 0.0] for _ in sets]
    for name in names:
        row = f"{name:28s}"
        vals = []
        for k, s in enumerate(sets):
            objs, nbytes, pbytes = (x / per for x in s.get(name, (0, 0, 0)))
            totals[k][0] += objs
            totals[k][1] += nbytes
            totals[k][2] += pbytes
            vals.append(nbytes)
            row += f" {objs:8.2f} {nbytes:9.1f} {pbytes:9.1f}"
        if len(sets) == 2:
            row += f" {vals[1] - vals[0]:10.1f}"
        print(row)
    row = f"{'total':28s}" + "".join(f" {t[0]:8.2f} {t[1]:9.1f} {t[2]:9.1f}" for t in totals)
    if len(sets) == 2:
        row += f" {totals[1][1] - totals[0][1]:10.1f}"
    print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
