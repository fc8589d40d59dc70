#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Software-TLB fills by part, from tests/bench/tbcount.c's page counts.

    pg-report.py [--per N] [--top K] TBDIR KALLSYMSDIR [SET ...]

With TBCOUNT_PAGES=1 in QEMU's environment, tbcount.c also counts, for
every guest page, the CR3 epochs in which a block started there (code) or
a load or store touched it (data): QEMU's x86 TCG flushes its software
TLB at every CR3 write, so each is a TLB fill, a page walk in a helper.
TBDIR holds SET.pg (the counter's directory, RUNDIR/<role>/tb);
KALLSYMSDIR holds SET.kallsyms (RUNDIR/<role>/prof). Prints per set the
epochs and the fills by part of the address space, the modules' pages by
module, and with --top the pages filled most often.
"""

import argparse
import bisect
import os
import sys

MODULES_START = 0xFFFFFFFFA0000000
KERNEL_START = 0xFFFFFFFF80000000


def load_modules(path):
    """Sorted (address, module) of every symbol in a module."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) > 3 and parts[3].startswith("["):
                addr = int(parts[0], 16)
                if addr:
                    syms.append((addr, parts[3].strip("[]")))
    syms.sort()
    return syms


def part_of(addr, mods):
    if addr < 0x0000800000000000:
        return "user"
    if addr >= MODULES_START:
        # The module of the nearest symbol at or below the page's end (a
        # module's data follows its code within a few hundred KiB).
        i = bisect.bisect_right(mods, (addr + 4095, "\xff")) - 1
        if i >= 0 and addr - mods[i][0] < 1 << 20:
            return "module " + mods[i][1]
        return "module area"
    if addr >= KERNEL_START:
        return "kernel image"
    if 0xFFFF888000000000 <= addr < 0xFFFFC88000000000:
        return "direct map"
    if 0xFFFFC90000000000 <= addr < 0xFFFFE90000000000:
        return "vmalloc"
    if 0xFFFFEA0000000000 <= addr < 0xFFFFEB0000000000:
        return "vmemmap"
    return "other kernel"


def load(tbdir, kdir, s):
    pages = []
    epochs = 0
    with open(os.path.join(tbdir, s + ".pg")) as f:
        for line in f:
            a, b, *c = line.split()
            if a == "epochs":
                epochs = int(b)
            elif a != "overflow":
                pages.append((int(a, 16) << 12, int(b), int(c[0])))
    mods = load_modules(os.path.join(kdir, s + ".kallsyms"))
    return epochs, pages, mods


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=float, default=1)
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("tbdir")
    ap.add_argument("kdir")
    ap.add_argument("sets", nargs="*", default=["c", "rust"])
    a = ap.parse_args()
    res = {}
    for s in a.sets:
        try:
            res[s] = load(a.tbdir, a.kdir, s)
        except OSError as e:
            sys.exit(str(e))
    parts = {}
    for s, (epochs, pages, mods) in res.items():
        for addr, code, data in pages:
            p = part_of(addr, mods)
            c, d = parts.setdefault(p, {}).get(s, (0, 0))
            parts[p][s] = (c + code, d + data)
    print("per %g: %s" % (a.per, "  ".join("%s epochs %.1f" % (s, r[0] / a.per) for s, r in res.items())))
    print("%-22s" % "fills (code / data)" + "".join("%22s" % s for s in a.sets))
    tot = {s: [0, 0] for s in a.sets}
    for p in sorted(parts, key=lambda p: -sum(sum(v) for v in parts[p].values())):
        row = "%-22s" % p
        for s in a.sets:
            c, d = parts[p].get(s, (0, 0))
            tot[s][0] += c
            tot[s][1] += d
            row += "%11.1f /%9.1f" % (c / a.per, d / a.per)
        print(row)
    print("%-22s" % "total" + "".join("%11.1f /%9.1f" % (t[0] / a.per, t[1] / a.per) for t in tot.values()))
    for s, (epochs, pages, mods) in res.items():
        if not a.top:
            continue
        print("\n%s: pages filled most often (code, data per %g)" % (s, a.per))
        for addr, code, data in sorted(pages, key=lambda p: -(p[1] + p[2]))[: a.top]:
            print("  %016x %-22s %8.1f %8.1f" % (addr, part_of(addr, mods), code / a.per, data / a.per))


if __name__ == "__main__":
    main()
