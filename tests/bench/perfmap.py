#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host time by guest symbol: the host's perf over QEMU's translated code.

    perfmap.py record RUN
    perfmap.py report [--top K] [--role a|b] RUN SET [RUN2 SET2]

A QEMU of 8.1 or later started with -perfmap writes /tmp/perf-<pid>.map,
which names every block of host code it translates by the guest address
it came from ("guest-0x..."). ``record`` runs beside a ``run-pair.sh`` of
``bench_profile.sh`` with PROF_HOST=1 and, for each module set, records
``perf record -a -e cpu-clock`` on the host from the set's
``bench_profile.ready.SET.a`` to its ``bench_profile.done.SET.b`` (or
``.a``, where guest a runs the set alone: the transfer, with a second of
set-up) into RUN/hostprof/SET.data, and which
QEMU process is which guest (RUN/hostprof/pids.txt); PERFMAP_FREQ sets the
sampling rate (9999 by default); with PERFMAP_CALLERS=1 it also records
each sample's call chain (``--call-graph=dwarf``), so that ``report
--callers`` can name, for the time in QEMU's functions, the guest code
that called them (the first translated block on the host stack: a return
or indirect jump of the guest calls ``helper_lookup_tb_ptr``, a miss of
the software TLB its fill). ``report`` splits each guest's QEMU
samples into QEMU's own code (by function: its helpers, the software MMU,
the jump cache's probe ``helper_lookup_tb_ptr``), the host kernel, and
the translated code by guest symbol (SET.kallsyms, which bench_profile.sh
keeps); with a second RUN and SET (e.g. the same set in a run with other
modules), side by side, most different first. Samples count host time
(the sampling period each): the same work in two runs compares directly;
time in a helper is QEMU's, not the guest code that called it.
"""

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import time

GUEST = "guest-0x"
SAMPLE = re.compile(r"\s*(\d+)/(\d+)\s+([0-9a-f]+)\s+(\S+)\s+\((.*)\)")


def record(run):
    """Records the host's perf over each set's transfer, until the guests end."""
    sync = os.path.join(run, "sync")
    out = os.path.join(run, "hostprof")
    freq = os.environ.get("PERFMAP_FREQ", "9999")
    seen = set()
    while not os.path.exists(os.path.join(run, "qemu-a.status")):
        for f in sorted(os.listdir(sync)) if os.path.isdir(sync) else []:
            m = re.match(r"bench_profile\.ready\.(.+)\.a$", f)
            if not m or m.group(1) in seen:
                continue
            st = m.group(1)
            seen.add(st)
            os.makedirs(out, exist_ok=True)
            write_pids(run, out)
            callers = ["--call-graph=dwarf,2048"] if os.environ.get("PERFMAP_CALLERS") else []
            perf = subprocess.Popen(
                ["perf", "record", "-e", "cpu-clock", "-F", freq, "-a", *callers,
                 "-o", os.path.join(out, st + ".data")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # The end of the set's transfer: guest b's "done", or guest
            # a's where a runs it alone (PROF_LOOPBACK, PROF_OP=objmem).
            done = [os.path.join(sync, f"bench_profile.done.{st}.{r}") for r in "ba"]
            while not any(map(os.path.exists, done)) and not os.path.exists(
                    os.path.join(run, "qemu-a.status")):
                time.sleep(0.02)
            perf.send_signal(2)
            perf.wait()
        time.sleep(0.05)


def write_pids(run, out):
    """Which QEMU process runs which guest: its serial console's file names it."""
    with open(os.path.join(out, "pids.txt"), "w") as f:
        for role in "ab":
            found = subprocess.run(["pgrep", "-f", f"{run}/console-{role}.log"],
                                   capture_output=True, text=True).stdout.split()
            for pid in found:
                with open(f"/proc/{pid}/comm") as c:
                    if c.read().startswith("qemu"):
                        f.write(f"{role} {pid}\n")


def kallsyms(path):
    """The guest's text symbols, sorted by address: [(address, name)]."""
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW":
                syms.append((int(p[0], 16), p[2] + (" " + p[3] if len(p) > 3 else "")))
    syms.sort()
    return syms


def guest_symbol(syms, pc):
    if pc < 0xffff800000000000:
        return "[user]"
    i = bisect.bisect_right(syms, (pc, "\xff")) - 1
    return syms[i][1] if i >= 0 else "?"


def part_of(g):
    """The part of the guest a guest symbol is in: [user], [kernel] or [module]."""
    return g.split(" ")[1] if " " in g else "[user]" if g == "[user]" else "[kernel]"


def perf_samples(path):
    """(pid, [(sym, dso)] from the sampled frame outwards) for each sample."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "pid,tid,ip,sym,dso"],
                         capture_output=True, text=True).stdout
    pid, frames = None, []
    for line in out.splitlines():
        m = SAMPLE.match(line)
        if m:
            # A sample on one line (no call chain).
            if pid:
                yield pid, frames
            yield m.group(1), [(m.group(4), os.path.basename(m.group(5)))]
            pid, frames = None, []
            continue
        head = re.match(r"\s*(\d+)/(\d+)\s*$", line)
        if head:
            if pid:
                yield pid, frames
            pid, frames = head.group(1), []
            continue
        frame = re.match(r"\s+[0-9a-f]+\s+(\S+)\s+\((.*)\)", line)
        if frame and pid:
            frames.append((frame.group(1), os.path.basename(frame.group(2))))
    if pid:
        yield pid, frames


def samples(run, st, callers=False):
    """Per role: {"part": Counter, "sym": Counter} of the QEMU's samples."""
    pids = {}
    with open(os.path.join(run, "hostprof", "pids.txt")) as f:
        for line in f:
            role, pid = line.split()
            pids[pid] = role
    syms = {r: kallsyms(os.path.join(run, r, "prof", st + ".kallsyms")) for r in "ab"}
    res = {r: {"part": collections.Counter(), "sym": collections.Counter()} for r in "ab"}
    for pid, frames in perf_samples(os.path.join(run, "hostprof", st + ".data")):
        if pid not in pids or not frames:
            continue
        role = pids[pid]
        sym, dso = frames[0]
        if sym.startswith(GUEST):
            g = guest_symbol(syms[role], int(sym[len(GUEST):], 16))
            part = "guest " + part_of(g)
            name = "guest " + g
        else:
            part = "host " + dso
            name = f"host {sym} ({dso})"
            if callers:
                guest = [f for f, _ in frames[1:] if f.startswith(GUEST)]
                if guest:
                    g = guest_symbol(syms[role], int(guest[0][len(GUEST):], 16))
                    name += " <- " + g
                    part += " <- guest " + part_of(g)
        res[role]["part"][part] += 1
        res[role]["sym"][name] += 1
    return res


def report(args):
    runs = [(args.run, args.set)]
    if args.run2:
        runs.append((args.run2, args.set2 or args.set))
    data = [samples(r, s, args.callers) for r, s in runs]
    heads = [f"{os.path.basename(os.path.normpath(r))}:{s}" for r, s in runs]
    for role in args.role or "ab":
        for what in ("part", "sym"):
            cs = [d[role][what] for d in data]
            keys = set().union(*cs)
            if len(cs) == 1:
                keys = sorted(keys, key=lambda k: -cs[0][k])
            else:
                keys = sorted(keys, key=lambda k: -abs(cs[0][k] - cs[1][k]))
            top = keys if what == "part" else keys[:args.top]
            print(f"guest {role}, host samples by {what}: " + "  ".join(
                f"{h} {sum(c.values())}" for h, c in zip(heads, cs)))
            for k in top:
                print("  " + "".join(f"{c[k]:8d}" for c in cs) + "  " + k[:100])
            print()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "record":
        if len(sys.argv) != 3:
            sys.exit(__doc__)
        record(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=["report"])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--role", choices=["a", "b"])
    ap.add_argument("--callers", action="store_true",
                    help="name the guest code that called each QEMU function")
    ap.add_argument("run")
    ap.add_argument("set")
    ap.add_argument("run2", nargs="?")
    ap.add_argument("set2", nargs="?")
    report(ap.parse_args())


if __name__ == "__main__":
    main()
