#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest instructions by symbol, from tests/bench/tbcount.c's dumps.

    tb-report.py [--per N] [--top K] DIR [SET ...]

DIR holds, per module set (c and rust by default), SET.tb (a dump of the
counter: translation block address and instructions executed from it) and
SET.kallsyms (the guest's /proc/kallsyms while the set was loaded), as
tests/scenarios/bench_profile.sh leaves them. Prints, per set, the
instructions, blocks entered (under TCG each entry costs a jump or a
lookup), memory accesses (each a software TLB lookup) and translations, by
part (user space, the RDMA drivers' modules, the rest of the kernel) and
the drivers' top symbols; with two sets, the rest of the kernel's symbols
side by side, most different first. --per N divides every count by N (the
packets or messages of the transfer) so that the figures are per unit.
"""

import argparse
import bisect
import os
import re
import sys

# Modules of the RDMA stack: the drivers under comparison.
DRIVERS = ("rdma_rxe", "rdma_ucm", "ib_cm")


def load_kallsyms(path):
    """Sorted (address, name, module) of the text symbols."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            addr = int(parts[0], 16)
            if addr == 0:
                continue
            mod = parts[3].strip("[]") if len(parts) > 3 else "vmlinux"
            syms.append((addr, parts[2], mod))
    syms.sort()
    return syms


def demangle(name):
    """A readable path for a Rust v0 symbol (its identifiers joined), or the
    name itself."""
    if not name.startswith("_R"):
        return name
    idents = []
    i = 0
    body = name[2:]
    while i < len(body):
        m = re.match(r"(\d+)", body[i:])
        if not m:
            i += 1
            continue
        n = int(m.group(1))
        start = i + len(m.group(1))
        if start < len(body) and body[start] == "_":
            start += 1
        ident = body[start:start + n]
        if n and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident) and not re.fullmatch(
            r"[a-zA-Z0-9]{1,2}", ident
        ):
            idents.append(ident)
            i = start + n
        else:
            i = start
    path = "::".join(idents[1:] if len(idents) > 1 else idents)
    return path or name


# The counts of a dump line, then what is computed from them: the calls
# (entries at a symbol's first byte) and, from how each block ends
# (tbcount.c's exit_kind), the hand-overs TCG looks up (returns, indirect
# and cross-page jumps) and the exits from its execution loop, and the
# locked instructions executed.
METRICS = ("insns", "blocks", "mem", "trans", "calls", "ret", "indir", "xpage", "loop", "locked")
EXIT_KINDS = {1: 5, 2: 6, 3: 7, 4: 8}


def by_symbol(tb_path, kallsyms_path):
    """{(module, symbol): [instructions, blocks entered, memory accesses,
    translations, calls]} of one dump."""
    syms = load_kallsyms(kallsyms_path)
    addrs = [s[0] for s in syms]
    counts = {}
    with open(tb_path) as f:
        for line in f:
            a, *n = line.split()
            raw = [int(v) for v in n] + [0] * (6 - len(n))
            n = raw[:4] + [0] * (len(METRICS) - 4)
            if raw[4] in EXIT_KINDS:
                n[EXIT_KINDS[raw[4]]] = raw[1]
            n[9] = raw[1] * raw[5]
            if a == "overflow":
                key = ("?", "[table overflow]")
            else:
                addr = int(a, 16)
                if addr < 0xFFFF800000000000:
                    key = ("user", "[user space]")
                else:
                    i = bisect.bisect_right(addrs, addr) - 1
                    key = ("?", "[unknown]") if i < 0 else (syms[i][2], syms[i][1])
                    # A block at the symbol's first byte is entered once a
                    # call (or a jump to its start, rare).
                    n[4] = n[1] if i >= 0 and syms[i][0] == addr else 0
            c = counts.setdefault(key, [0] * len(METRICS))
            for i, v in enumerate(n[: len(METRICS)]):
                c[i] += v
    return counts


def part_of(mod):
    if mod == "user":
        return "user space"
    if mod in DRIVERS:
        return "module " + mod
    if mod == "vmlinux":
        return "kernel (vmlinux)"
    return "other modules"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("dir")
    ap.add_argument("sets", nargs="*", default=["c", "rust"])
    args = ap.parse_args()
    data = {}
    for s in args.sets:
        tb = os.path.join(args.dir, s + ".tb")
        ks = os.path.join(args.dir, s + ".kallsyms")
        if not (os.path.exists(tb) and os.path.exists(ks)):
            sys.exit(f"{tb} or {ks} missing")
        data[s] = by_symbol(tb, ks)
    per = args.per
    unit = " per unit" if per != 1 else ""

    def total(d, keep):
        return [sum(v[m] for k, v in d.items() if keep(k)) / per for m in range(len(METRICS))]

    print(f"by part{unit}: instructions, blocks entered, memory accesses, translations, calls,")
    print("block exits by return, indirect jump, cross-page jump, to the execution loop; locked instructions")
    parts = sorted({part_of(k[0]) for d in data.values() for k in d})
    for s in args.sets:
        print(f"{s:<20}" + "".join(f"{m:>11}" for m in METRICS))
        for p in parts + ["kernel", "total"]:
            if p == "kernel":
                keep = lambda k: k[0] != "user"  # noqa: E731
            else:
                keep = lambda k, p=p: p == "total" or part_of(k[0]) == p  # noqa: E731
            print(f"{p:<20}" + "".join(f"{v:>11.0f}" for v in total(data[s], keep)))
    print()

    def line(name, vals):
        return f"{name[:60]:<61}" + "".join(f"{v / per:>11.0f}" for v in vals)

    shown = (0, 1, 2, 4, 9)
    head = "".join(f"{s[:4] + ' ' + METRICS[m][:5]:>11}" for s in args.sets for m in shown)
    if len(args.sets) == 2:
        a, b = args.sets
        names = {}
        for s in args.sets:
            for (mod, sym), v in data[s].items():
                key = (mod if mod in DRIVERS else "", demangle(sym))
                e = names.setdefault(key, {a: [0] * len(METRICS), b: [0] * len(METRICS)})
                e[s] = [x + y for x, y in zip(e[s], v)]
        # Driver symbols have different names in the two sets: listed
        # apart below; the rest of the kernel side by side.
        shared = {k: v for k, v in names.items() if not k[0] and k[1] != "[user space]"}
        rows = sorted(shared.items(), key=lambda kv: -abs(kv[1][b][0] - kv[1][a][0]))[: args.top]
        print(f"kernel symbols (not the drivers'), most different first{unit}")
        print(f"{'symbol':<61}" + head)
        for (mod, sym), v in rows:
            print(line(sym, [v[a][m] for m in shown] + [v[b][m] for m in shown]))
        print()
    for s in args.sets:
        rows = sorted(
            ((k, v) for k, v in data[s].items() if k[0] in DRIVERS),
            key=lambda kv: -kv[1][0],
        )[: args.top]
        print(f"{s}: the drivers' symbols{unit}")
        print(f"{'symbol':<61}" + "".join(f"{m:>11}" for m in METRICS))
        for (mod, sym), v in rows:
            print(line(demangle(sym), v))
        print()

if __name__ == "__main__":
    main()
