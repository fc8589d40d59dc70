#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host time by guest symbol, from tests/bench/tbcount.c's dumps taken with
TBCOUNT_TIME=1 in QEMU's environment.

    tb-time.py [--per N] [--top K] DIR SET_A SET_B

With TBCOUNT_TIME=1 the counter charges the host time (TSC cycles) from
each block's entry to the next block's to the first: the guest code with
what TCG does for it in between (software-TLB fills, block lookups,
helpers, interrupts taken; an idle guest's wait falls on its hlt). Prints,
per set, the host cycles, instructions and blocks entered by part (user
space, rdma_rxe, the other modules, the kernel image), then the symbols
of the two sets side by side, most different in cycles first, with the
cycles per instruction of each. --per N divides by N (the objects or
messages of the run). The instruction counts are exact; the cycles move
with the host's own speed (another guest, its frequency), by several
percent between two sets of one boot: compare a symbol's cycles per
instruction with the rest of its set's, not single totals.
"""

import argparse
import bisect
import collections
import os

import tb_sibling

tb_report = tb_sibling.load("tb-report.py")


def part(module):
    """The part a symbol's module belongs to."""
    if module in ("user", "vmlinux", "rdma_rxe"):
        return module
    return "other modules"


def load(directory, name):
    """{(module, symbol): [cycles, instructions, blocks]} of one dump."""
    syms = tb_report.load_kallsyms(os.path.join(directory, name + ".kallsyms"))
    addrs = [s[0] for s in syms]
    counts = collections.defaultdict(lambda: [0, 0, 0])
    with open(os.path.join(directory, name + ".tb")) as f:
        for line in f:
            fields = line.split()
            if fields[0] == "overflow":
                continue
            if len(fields) < 8:
                raise SystemExit(f"{name}.tb has no cycles: dumped without TBCOUNT_TIME=1")
            addr = int(fields[0], 16)
            if addr < 0xFFFF800000000000:
                key = ("user", "[user space]")
            else:
                i = bisect.bisect_right(addrs, addr) - 1
                key = ("?", "[unknown]") if i < 0 else (syms[i][2], syms[i][1])
            c = counts[key]
            c[0] += int(fields[7])
            c[1] += int(fields[1])
            c[2] += int(fields[2])
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("dir")
    ap.add_argument("sets", nargs=2)
    a = ap.parse_args()
    counts = [load(a.dir, s) for s in a.sets]
    print("per unit: host kcycles, instructions, blocks entered")
    for name, c in zip(a.sets, counts):
        parts = collections.defaultdict(lambda: [0, 0, 0])
        for (mod, _), v in c.items():
            p = parts[part(mod)]
            for i in range(3):
                p[i] += v[i]
        row = "  ".join(f"{p}: {v[0] / a.per / 1e3:.1f} {v[1] / a.per:.0f} {v[2] / a.per:.0f}"
                        for p, v in sorted(parts.items()))
        total = sum(v[0] for v in parts.values()) / a.per / 1e3
        print(f"{name:8s} {row}  total {total:.1f}")
    first, second = counts
    keys = sorted(set(first) | set(second),
                  key=lambda k: -abs(second.get(k, [0])[0] - first.get(k, [0])[0]))
    z = [0, 0, 0]
    print(f"\n{'symbol':56s} {a.sets[0]:>9s} {a.sets[1]:>9s} {'insns':>8s} {'insns':>8s}"
          f" {'cyc/ins':>8s} {'cyc/ins':>8s}")
    for k in keys[:a.top]:
        u, v = first.get(k, z), second.get(k, z)
        name = f"{k[0]}:{tb_report.demangle(k[1])}"[:56]
        print(f"{name:56s} {u[0] / a.per / 1e3:9.1f} {v[0] / a.per / 1e3:9.1f}"
              f" {u[1] / a.per:8.0f} {v[1] / a.per:8.0f}"
              f" {u[0] / max(u[1], 1):8.1f} {v[0] / max(v[1], 1):8.1f}")


if __name__ == "__main__":
    main()
