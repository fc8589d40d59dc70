#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The calls a module made, by call site, from tests/bench/tbcount.c's dumps.

    tb-calls.py [--per N] [--top K] [--callee RE] DIR SET MODULE.ko

A call ends a translation block, so every block that runs through a call
instruction made that call once per entry: the blocks that start between
the call and the control transfer before it (the function's start, a
jump, a return, another call), whichever way they were entered. The sum
of their entries is the number of calls made from that site. (Counting
the block at the return address instead, as this did before, also
counted the jumps that land there: a function's shared epilogue showed a
call per entry.) A block spans less than a page of code, so a straight
run longer than that could count a block that stopped short of the call;
none is that long. DIR holds
SET.tb and SET.kallsyms (as bench_profile.sh leaves them); MODULE.ko is
the module that was loaded (objdump -dr finds its call sites, kallsyms its
load address). Prints calls per caller and callee, most first, divided by
N with --per.
"""

import argparse
import bisect
import os
import re
import subprocess
import sys

import tb_sibling

tb_report = tb_sibling.load("tb-report.py")

FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
# Instruction prefixes objdump prints before the mnemonic.
PREFIXES = {"cs", "ds", "notrack", "bnd", "lock", "rep", "repz", "repnz", "data16"}
# Mnemonics that end a straight run of code (a translation block ends there).
TRANSFER = re.compile(r"^(j|call|ret|iret|lret|sysret|ud2|int3|hlt)")
# How far a translation block reaches: QEMU's x86 translator stops a block
# before it spans a page (TARGET_PAGE_SIZE - 32).
BLOCK_REACH = 4096 - 32
INSN = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$")
RELOC = re.compile(r"^\s+[0-9a-f]+: R_X86_64_\w+\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$")
NORETURN = re.compile(r"panic|_fail|unreachable|__ubsan|BUG")


def mnemonic(m):
    """The mnemonic of an INSN match, past any prefix, and its operands."""
    words = (m.group(2) + " " + m.group(3)).split()
    while len(words) > 1 and words[0] in PREFIXES:
        words.pop(0)
    return words[0], " ".join(words[1:])


def call_sites(ko):
    """[(caller, callee, offset of the call, offset where its straight run
    of code starts)] of the module's .text, and {function: offset}."""
    out = subprocess.run(
        ["objdump", "-dr", "--no-show-raw-insn", "-j", ".text", ko],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    funcs, sites = {}, []
    caller, run_start, after_transfer, call = None, 0, False, None
    for line in out:
        m = FUNC.match(line)
        if m:
            caller = m.group(2)
            funcs[caller] = run_start = int(m.group(1), 16)
            after_transfer, call = False, None
            continue
        m = RELOC.match(line)
        if m and call:
            # The relocation names a call's target in the unlinked module.
            call[1] = m.group(1)
            continue
        m = INSN.match(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        if after_transfer:
            run_start, after_transfer = addr, False
        call = None
        name, operands = mnemonic(m)
        if name.startswith("call"):
            target = re.search(r"<([^>+]+)", operands)
            call = [caller, target.group(1) if target else operands, addr, run_start]
            sites.append(call)
        if TRANSFER.match(name):
            after_transfer = True
    return [tuple(s) for s in sites], funcs


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
    starts = sorted(entries)
    counts = {}
    for caller, callee, at, run_start in sites:
        # The blocks that run through the call: those starting in its
        # straight run, no further back than a block reaches.
        lo = base + max(run_start, at - BLOCK_REACH)
        i = bisect.bisect_left(starts, lo)
        n = 0
        while i < len(starts) and starts[i] <= base + at:
            n += entries[starts[i]]
            i += 1
        # Not a call at all but a jump to code that does not return (a
        # panic), which the compiler emits as a call.
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
