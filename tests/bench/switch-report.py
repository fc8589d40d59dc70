#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Who had the CPU during a transfer, from perf's context-switch records.

    switch-report.py [--per N] [--comm NAME] FILE...

FILE is `perf script --show-switch-events -F comm,tid,cpu,time,event` of a
`perf record -e dummy --switch-events -a` (what tests/scenarios/
bench_pairs.sh writes with PROF_SWITCH=1; no tracepoints needed). The
window is from the first to the last switch of --comm (ib_send_bw); in it,
per task (worker and CPU numbers dropped from the name): the CPU time,
the runs, their median and 90th-percentile length, and how many ended
preempted (switched out while runnable) rather than by blocking. --per N
adds the CPU time per unit (the messages of the transfer).

On a one-vCPU guest whose perftest busy-polls, the driver's workers share
the CPU with the poller; the worker's CPU time per message is then what
bounds the bandwidth.
"""
import argparse
import collections
import re

LINE = re.compile(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+): PERF_RECORD_SWITCH_CPU_WIDE (IN|OUT)\s*(preempt)?')


def events(path):
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                yield float(m.group(4)), m.group(1), int(m.group(2)), m.group(5), bool(m.group(6))


def family(comm):
    # kworker/u4:1-events_unbound -> kworker/u-events_unbound (cut to 15 by the kernel)
    return re.sub(r'/\d+$|:\d+', '', comm).replace('/u4', '/u')


def report(path, comm, per):
    ev = list(events(path))
    mine = [e for e in ev if e[1] == comm]
    if not mine:
        print(f'{path}: no {comm}')
        return
    t0, t1 = mine[0][0], mine[-1][0]
    cpu, runs, lens, pre, since = collections.defaultdict(float), collections.Counter(), collections.defaultdict(list), collections.Counter(), {}
    for t, c, tid, d, preempted in ev:
        if t < t0 or t > t1:
            continue
        k = family(c)
        if d == 'IN':
            since[tid] = t
        elif tid in since:
            s = since.pop(tid)
            cpu[k] += t - s
            runs[k] += 1
            lens[k].append(t - s)
            pre[k] += preempted
    print(f'{path}: window {(t1 - t0) * 1e3:.0f} ms')
    print(f'  {"task":20s} {"CPU ms":>8s} {"runs":>6s} {"median us":>10s} {"p90 us":>8s} {"preempted":>9s}' + (f' {"us/unit":>8s}' if per else ''))
    for k, v in sorted(cpu.items(), key=lambda x: -x[1])[:8]:
        ls = sorted(lens[k])
        row = f'  {k:20s} {v * 1e3:8.1f} {runs[k]:6d} {ls[len(ls) // 2] * 1e6:10.0f} {ls[int(len(ls) * 0.9)] * 1e6:8.0f} {pre[k]:9d}'
        if per:
            row += f' {v * 1e6 / per:8.1f}'
        print(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--per', type=int, default=0)
    ap.add_argument('--comm', default='ib_send_bw')
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()
    for f in a.files:
        report(f, a.comm, a.per)


if __name__ == '__main__':
    main()
