#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A module function's guest instructions by source line or inlined function,
from tests/bench/tbcount.c's dumps.

    tb-lines.py [--per N] [--top K] [--by func|line|file:NAME] DIR SET MODULE.ko FUNC_RE

The counter counts a translation block whole, by its start address, and a
block runs through the code of several inlined functions; this spreads each
block's count over the instructions it holds (the block's instructions
divided by its entries, walked from its start in the disassembly), so that
every instruction of the functions matching FUNC_RE is weighed by the
times it ran. Each is then named by addr2line's inline chain: --by func
(the default) by the innermost function of the drivers' own sources,
--by line by the innermost line of them, --by file:NAME by the innermost
line in the source file NAME (e.g. file:rxe/rc.rs: which line of that
file, inlined calls included, the work comes from).

MODULE.ko must be the module the guest ran, built with line tables:
scripts/build-modules.sh bench KRUSTFLAGS=-Cdebuginfo=1 (which changes no
code), its .ko kept apart from later builds, e.g.:

    tb-lines.py --per 1000 RUN/b/prof rust KO/rdma_rxe.ko 'qp_io6sender'
"""

import argparse
import collections
import os
import re
import subprocess
import sys

import tb_sibling

tb_report = tb_sibling.load("tb-report.py")
tb_calls = tb_sibling.load("tb-calls.py")

INSN = re.compile(r"^\s+([0-9a-f]+):\s+\S")
OWN = ("/rxe/", "/ucma/", "/core/")
# Rust's own library (its `core` crate's sources are under library/core/).
LIBRARY = "/library/"


def own(loc):
    """Whether a location is in the drivers' sources."""
    return LIBRARY not in loc and any(m in loc for m in OWN)


def instructions(ko, func_re):
    """Offsets of the instructions of the .text functions matching func_re,
    in order."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", "-j", ".text", ko],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    offs, keep = [], False
    for line in out:
        m = tb_calls.FUNC.match(line)
        if m:
            keep = re.search(func_re, m.group(2)) is not None
            continue
        m = INSN.match(line)
        if keep and m:
            offs.append(int(m.group(1), 16))
    return offs


def inline_chains(ko, offs):
    """{offset: [(function, file:line), ...] innermost first}."""
    out = subprocess.run(
        ["addr2line", "-a", "-i", "-f", "-C", "-e", ko, "-j", ".text"],
        input="\n".join(hex(o) for o in offs), check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    chains, cur, i = {}, None, 0
    while i < len(out):
        if out[i].startswith("0x"):
            cur = int(out[i], 16)
            chains[cur] = []
            i += 1
            continue
        chains[cur].append((out[i], out[i + 1].split(" ")[0]))
        i += 2
    return chains


def source(loc):
    """A location relative to the repository (or as given)."""
    loc = os.path.normpath(loc)
    for mark in OWN:
        if mark in loc:
            return mark.strip("/") + "/" + loc.split(mark, 1)[1]
    return loc


def key_of(chain, by):
    mine = [(f, source(l)) for f, l in chain if own(l) and not l.endswith(":?")]
    if by == "func":
        return mine[0][0] if mine else chain[-1][0]
    if by == "line":
        return mine[0][1] if mine else "?"
    name = by.split(":", 1)[1]
    lines = [l for _, l in mine if l.startswith(name + ":")]
    return lines[0] if lines else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--by", default="func")
    ap.add_argument("dir")
    ap.add_argument("set")
    ap.add_argument("ko")
    ap.add_argument("func_re")
    args = ap.parse_args()
    mod, base, _, _ = tb_calls.loaded_module(args.dir, args.set, args.ko)
    offs = instructions(args.ko, args.func_re)
    at = {o: i for i, o in enumerate(offs)}
    weight = collections.Counter()
    with open(os.path.join(args.dir, args.set + ".tb")) as f:
        for line in f:
            a, *n = line.split()
            if a == "overflow":
                continue
            start = int(a, 16) - base
            insns, entries = int(n[0]), int(n[1])
            if start not in at or entries == 0:
                continue
            i = at[start]
            for o in offs[i : i + round(insns / entries)]:
                weight[o] += entries
    chains = inline_chains(args.ko, sorted(weight))
    by = collections.Counter()
    for o, w in weight.items():
        by[key_of(chains.get(o, [("?", "?")]), args.by)] += w
    total = sum(weight.values())
    print(f"{args.func_re} in {mod} ({args.set}): {total / args.per:.0f} instructions"
          + (" per unit" if args.per != 1 else ""))
    for k, w in by.most_common(args.top):
        print(f"{w / args.per:>9.0f}  {tb_report.demangle(k)[:100]}")


if __name__ == "__main__":
    main()
