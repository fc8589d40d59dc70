#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The calls a module made, by call site, from tests/bench/tbcount.c's dumps.

    tb-calls.py [--per N] [--top K] [--callee RE] DIR SET MODULE.ko

A call ends a translation block and the return lands at the start of the
next one, so the block at a call's return address was entered once for
every return from that call: its count is the number of calls made from
that site (plus any other jump to the same address, rare). DIR holds
SET.tb and SET.kallsyms (as bench_profile.sh leaves them); MODULE.ko is
the module that was loaded (objdump -dr finds its call sites, kallsyms its
load address). Prints calls per caller and callee, most first, divided by
N with --per.
"""

import argparse
import os
import re
import subprocess
import sys

import tb_sibling

tb_report = tb_sibling.load("tb-report.py")

FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$")
RELOC = re.compile(r"^\s+[0-9a-f]+: R_X86_64_\w+\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$")
NORETURN = re.compile(r"panic|_fail|unreachable|__ubsan|BUG")


def call_sites(ko):
    """[(caller, callee, offset of the instruction after the call)] of the
    module's .text, and {function: offset}."""
    out = subprocess.run(
        ["objdump", "-dr", "--no-show-raw-insn", "-j", ".text", ko],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    funcs, sites = {}, []
    caller, pending = None, None
    for line in out:
        m = FUNC.match(line)
        if m:
            caller = m.group(2)
            funcs[caller] = int(m.group(1), 16)
            continue
        m = RELOC.match(line)
        if m and pending:
            pending[1] = m.group(1)
            continue
        m = INSN.match(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        if pending:
            pending[2] = addr
            sites.append(tuple(pending))
            pending = None
        if m.group(2).startswith("call"):
            target = re.search(r"<([^>+]+)", m.group(3))
            pending = [caller, target.group(1) if target else m.group(3), None]
    return sites, funcs


def loaded_module(dirname, set_name, ko):
    """The module's name, the address SET loaded its .text at (from
    SET.kallsyms in DIR), its call sites and functions (as call_sites).
    Exits if SET did not load this very .ko (its functions' offsets do not
    all match)."""
    mod = os.path.basename(ko)[: -len(".ko")]
    syms = tb_report.load_kallsyms(os.path.join(dirname, set_name + ".kallsyms"))
    loaded = {name: addr for addr, name, m in syms if m == mod}
    sites, funcs = call_sites(ko)
    bases = {loaded[n] - off for n, off in funcs.items() if n in loaded}
    if len(bases) != 1:
        sys.exit(f"{ko} is not the {mod} of {set_name}.kallsyms")
    return mod, bases.pop(), sites, funcs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=60)
    ap.add_argument("--callee", default=None)
    ap.add_argument("dir")
    ap.add_argument("set")
    ap.add_argument("ko")
    args = ap.parse_args()
    mod, base, sites, _ = loaded_module(args.dir, args.set, args.ko)
    entries = {}
    with open(os.path.join(args.dir, args.set + ".tb")) as f:
        for line in f:
            a, *n = line.split()
            if a != "overflow":
                entries[int(a, 16)] = int(n[1])
    counts = {}
    for caller, callee, after in sites:
        if after is None:
            continue
        n = entries.get(base + after, 0)
        # A call that does not return (a panic) is followed by another
        # path's block, not a return.
        if NORETURN.search(callee):
            continue
        if n and (not args.callee or re.search(args.callee, tb_report.demangle(callee))):
            key = (tb_report.demangle(caller), tb_report.demangle(callee))
            counts[key] = counts.get(key, 0) + n
    total = sum(counts.values())
    print(f"calls made by {mod} ({args.set}): {total / args.per:.0f}" + (" per unit" if args.per != 1 else ""))
    for (caller, callee), n in sorted(counts.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{n / args.per:>9.0f}  {caller[:64]:<65} -> {callee[:60]}")


if __name__ == "__main__":
    main()
