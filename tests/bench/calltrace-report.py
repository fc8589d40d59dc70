#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""calltrace-report.py RUN... [SET...]: where cmtime's connect step waits.

Reads the files tests/bench/calltrace.c wrote in bench_profile runs with
PROF_OP=cmtime PROF_CALLS=1 (RUN/{a,b}/prof/<set>[.N].{srv,cli}.calls) or
in benchmark runs with RRXE_BENCH_CALLS=1 (RUN/{a,b}/bench/<set>.<round>.
{srv,cli}.calls; the warm cmtime's files are left out) and prints, for each
set (the rounds of all RUNs pooled), the connect step on each side:

- the step's window: on the client from its first rdma_connect to its last
  ESTABLISHED (the ACCEPT that sends the RTU, at the end of the
  CONNECT_RESPONSE's handling), on the server from its first
  CONNECT_REQUEST event to its last ESTABLISHED event;
- each thread of the step's calls into the RDMA devices: the calls a
  connection, their median and their total time, the thread's time in
  calls as a share of the window;
- on the server, per connection: how long a request waited for the
  request thread (CONNECT_REQUEST read to its rdma_create_qp) and how long
  the thread took for it (rdma_create_qp and rdma_accept), with the CPU time
  the thread used in those two calls and its voluntary (it slept) and
  involuntary (another task took the CPU) context switches in them;
- last, cmtime's own calls over every step (rdma_disconnect among them):
  their wall and CPU time and switches, where the files record them.

First, each round's step in phases (see `phases`): cmtime's server reads
every request on its event thread and hands it to one request thread,
which creates the QP and accepts; the step is the burst of requests, then
one REP at a time at the request thread's pace.

Times are the guests' CLOCK_MONOTONIC under TCG: compare the sets, not the
figures with a real machine's.
"""
import collections
import functools
import glob
import os
import re
import statistics
import sys

UCMA = {0: 'CREATE_ID', 1: 'DESTROY_ID', 2: 'BIND_IP', 3: 'RESOLVE_IP',
        4: 'RESOLVE_ROUTE', 5: 'QUERY_ROUTE', 6: 'CONNECT', 7: 'LISTEN',
        8: 'ACCEPT', 9: 'REJECT', 10: 'DISCONNECT', 11: 'INIT_QP_ATTR',
        12: 'GET_EVENT', 13: 'GET_OPTION', 14: 'SET_OPTION', 15: 'NOTIFY',
        19: 'QUERY', 20: 'BIND', 21: 'RESOLVE_ADDR'}
EVENT = {0: 'ADDR_RESOLVED', 2: 'ROUTE_RESOLVED', 4: 'CONNECT_REQUEST',
         5: 'CONNECT_RESPONSE', 9: 'ESTABLISHED', 10: 'DISCONNECTED',
         15: 'TIMEWAIT_EXIT'}
# uverbs ioctl objects and methods (include/uapi/rdma/ib_user_ioctl_cmds.h)
OBJ = {0: 'DEVICE', 1: 'PD', 2: 'COMP_CHANNEL', 3: 'CQ', 4: 'QP', 5: 'SRQ',
       6: 'AH', 7: 'MR', 8: 'MW', 9: 'FLOW', 10: 'XRCD', 11: 'RWQ_IND_TBL',
       12: 'WQ', 13: 'FLOW_ACTION', 14: 'DM', 15: 'COUNTERS',
       16: 'ASYNC_EVENT'}
# uverbs write commands (include/uapi/rdma/ib_user_verbs.h)
WRITE = {0: 'GET_CONTEXT', 1: 'QUERY_DEVICE', 2: 'QUERY_PORT', 3: 'ALLOC_PD',
         4: 'DEALLOC_PD', 9: 'REG_MR', 13: 'DEREG_MR',
         17: 'CREATE_COMP_CHANNEL', 18: 'CREATE_CQ', 20: 'DESTROY_CQ',
         23: 'REQ_NOTIFY_CQ', 24: 'CREATE_QP', 25: 'QUERY_QP', 26: 'MODIFY_QP',
         27: 'DESTROY_QP'}

# cpu, vcsw, ivcsw: for cmtime's own (api) calls, the thread's CPU time (ns)
# and voluntary and involuntary context switches in the call; None for
# files written before calltrace.c recorded them.
Call = collections.namedtuple('Call', 'tid start end kind code result cpu vcsw ivcsw',
                              defaults=(None, None, None))


@functools.lru_cache(maxsize=None)
def load(path):
    """A file's calls by start, read once (the phases and the per-call
    tables both walk each file; neither changes the list)."""
    calls = []
    for line in open(path):
        if line.startswith('#'):
            continue
        f = line.split()
        if len(f) not in (6, 9):
            continue
        calls.append(Call(int(f[0]), int(f[1]), int(f[2]), f[3], f[4],
                          *(int(x) for x in f[5:])))
    calls.sort(key=lambda c: c.start)
    return calls


def name(c):
    if c.kind == 'ucma':
        cmd, _, ev = c.code.partition('+')
        n = UCMA.get(int(cmd), cmd)
        if ev:
            n += '>' + EVENT.get(int(ev), ev)
        return 'ucma ' + n
    if c.kind == 'uverbs-ioctl':
        om, _, cmd = c.code.partition('+')
        if cmd:
            return 'write ' + WRITE.get(int(cmd), cmd)
        o, m = om.split('.')
        return 'ioctl %s.%s' % (OBJ.get(int(o), o), m)
    if c.kind == 'uverbs-write':
        return 'write ' + WRITE.get(int(c.code), c.code)
    if c.kind in ('mmap', 'munmap'):
        return c.kind
    return c.code


def is_event(c, ev):
    return c.kind == 'ucma' and c.code == '12+%d' % ev


def window(calls, side):
    """The connect step's [start, end] on one side, or None."""
    if side == 'cli':
        starts = [c.start for c in calls if c.code == 'rdma_connect']
        resp = [c for c in calls if is_event(c, 5)]
        if not starts or not resp:
            return None
        last = resp[-1]
        ends = [c.end for c in calls if c.tid == last.tid and c.kind == 'ucma'
                and c.code == '8' and c.start >= last.end]
        return min(starts), ends[0] if ends else last.end
    reqs = [c.end for c in calls if is_event(c, 4)]
    est = [c.end for c in calls if is_event(c, 9)]
    if not reqs or not est:
        return None
    return min(reqs), max(est)


def phases(cli, srv):
    """One round's connect step in phases (ms), or None: on the client's
    clock the step (first rdma_connect to last RTU) and its first
    CONNECT_RESPONSE; on the server's the burst of requests (first to last
    CONNECT_REQUEST read), the first REP (ucma ACCEPT's end) after the
    first request, the REPs' pace (their mean interval, us) and the last
    ESTABLISHED after the last REP."""
    conn = [c for c in cli if c.code == 'rdma_connect']
    resp = [c.end for c in cli if is_event(c, 5)]
    rtu = [c.end for c in cli if c.kind == 'ucma' and c.code == '8']
    reqs = [c.end for c in srv if is_event(c, 4)]
    reps = [c.end for c in srv if c.kind == 'ucma' and c.code == '8']
    est = [c.end for c in srv if is_event(c, 9)]
    if not conn or not resp or not rtu or len(reqs) < 2 or len(reps) < 2 or not est:
        return None
    c0, s0 = conn[0].start, reqs[0]
    return {
        'step': (max(rtu) - c0) / 1e6,
        'first response': (resp[0] - c0) / 1e6,
        'request burst': (reqs[-1] - s0) / 1e6,
        'first REP': (reps[0] - s0) / 1e6,
        'REP pace (us)': (reps[-1] - reps[0]) / (len(reps) - 1) / 1e3,
        'last REP to ESTABLISHED': (max(est) - reps[-1]) / 1e6,
    }


def role(calls_of_thread):
    codes = {c.code for c in calls_of_thread}
    if 'rdma_accept' in codes:
        return 'request thread'
    if 'rdma_connect' in codes:
        return 'main thread'
    if any(c.kind == 'ucma' and c.code.startswith('12+') for c in calls_of_thread):
        return 'event thread'
    if 'rdma_disconnect' in codes:
        return 'disconnect thread'
    return 'thread %d' % calls_of_thread[0].tid


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = [a for a in sys.argv[1:] if os.path.isdir(a)]
    files = sorted(f for r in runs for f in glob.glob(os.path.join(r, '[ab]/*/*.calls'))
                   if '.warm.' not in os.path.basename(f))
    bytag = collections.defaultdict(list)
    for f in files:
        m = re.match(r'(.+)\.(srv|cli)\.calls$', os.path.basename(f))
        if m:
            s = m.group(1).split('.')[0]
            bytag[s].append((m.group(1), m.group(2), f))
    sets = [a for a in sys.argv[1:] if not os.path.isdir(a)] or sorted(bytag)
    # Each round's phases, where both sides' files are there.
    print('== the connect step by round, ms (client clock: step, first response; server clock: the rest)')
    names = None
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for s in sets:
        sides = collections.defaultdict(dict)
        for tag, sd, f in bytag.get(s, []):
            sides[(os.path.dirname(os.path.dirname(os.path.dirname(f))), tag)][sd] = f
        for (run, tag), fs in sorted(sides.items()):
            if 'cli' not in fs or 'srv' not in fs:
                continue
            ph = phases(load(fs['cli']), load(fs['srv']))
            if not ph:
                continue
            if names is None:
                names = list(ph)
                print('%-28s' % 'round' + ''.join('%14s' % n[:13] for n in names))
            print('%-28s' % ('%s %s' % (os.path.basename(run.rstrip('/')), tag))[-28:] +
                  ''.join('%14.1f' % ph[n] for n in names))
            for n in names:
                per[s][n].append(ph[n])
    if names:
        for s in sets:
            if per[s]:
                print('%-28s' % ('median %s (%d)' % (s, len(per[s][names[0]]))) +
                      ''.join('%14.1f' % statistics.median(per[s][n]) for n in names))
        print()
    for side in ('srv', 'cli'):
        print('== %s, connect step' % ('server (guest a)' if side == 'srv' else 'client (guest b)'))
        stats = {}
        for s in sets:
            st = stats[s] = {'win': [], 'conns': 0, 'by': collections.defaultdict(list),
                             'share': collections.defaultdict(list), 'wait': [], 'serve': [],
                             'cpu': [], 'vcsw': [], 'ivcsw': []}
            for tag, sd, f in bytag.get(s, []):
                if sd != side:
                    continue
                calls = load(f)
                w = window(calls, side)
                if not w:
                    continue
                lo, hi = w
                st['win'].append((hi - lo) / 1e6)
                inw = [c for c in calls if c.start >= lo - 1000 and c.end <= hi + 1000]
                nconn = sum(1 for c in inw if c.code == ('rdma_connect' if side == 'cli' else 'rdma_accept'))
                st['conns'] += nconn
                threads = collections.defaultdict(list)
                for c in calls:
                    threads[c.tid].append(c)
                for tid, tc in threads.items():
                    r = role(tc)
                    mine = [c for c in inw if c.tid == tid]
                    # Nested: the api calls contain the device calls; share counts device calls.
                    dev = [c for c in mine if c.kind != 'api']
                    if mine:
                        st['share'][r].append(sum(c.end - c.start for c in dev) / (hi - lo))
                    for c in mine:
                        st['by'][(r, name(c))].append(c.end - c.start)
                if side == 'srv':
                    reqs = [c.end for c in calls if is_event(c, 4)]
                    cq = [c for c in calls if c.code == 'rdma_create_qp']
                    acc = [c for c in calls if c.code == 'rdma_accept']
                    for r, q, a in zip(reqs, cq, acc):
                        st['wait'].append(q.start - r)
                        st['serve'].append(a.end - q.start)
                        if q.cpu is not None and a.cpu is not None:
                            st['cpu'].append(q.cpu + a.cpu)
                            st['vcsw'].append(q.vcsw + a.vcsw)
                            st['ivcsw'].append(q.ivcsw + a.ivcsw)
        print('%-44s' % 'window (ms, median of rounds)' +
              ''.join('%22s' % ('%s: %.1f (%d)' % (s, statistics.median(stats[s]['win']), len(stats[s]['win'])) if stats[s]['win'] else s) for s in sets))
        if side == 'srv':
            for k, lab in (('wait', 'request waits for the thread (us, median)'),
                           ('serve', 'thread serves a request (us, median)'),
                           ('cpu', '  of which its CPU time (us, median)')):
                print('%-44s' % lab + ''.join('%22s' % ('%.0f' % (statistics.median(stats[s][k]) / 1e3) if stats[s][k] else '-') for s in sets))
            for k, lab in (('vcsw', '  its voluntary switches (mean)'),
                           ('ivcsw', '  its involuntary switches (mean)')):
                print('%-44s' % lab + ''.join('%22s' % ('%.2f' % statistics.mean(stats[s][k]) if stats[s][k] else '-') for s in sets))
        roles = sorted({r for s in sets for r in stats[s]['share']})
        for r in roles:
            print('%-44s' % ('%s: share of window in calls' % r) +
                  ''.join('%22s' % ('%.2f' % statistics.median(stats[s]['share'][r]) if stats[s]['share'][r] else '-') for s in sets))
        keys = sorted({k for s in sets for k in stats[s]['by']})
        print('%-44s' % 'call: per conn, median us, total ms/round' + ''.join('%22s' % s for s in sets))
        for k in keys:
            row = '%-44s' % ('%s: %s' % k)[:44]
            for s in sets:
                v = stats[s]['by'].get(k)
                rounds = max(1, len(stats[s]['win']))
                conns = max(1, stats[s]['conns'])
                if v:
                    row += '%22s' % ('%.2f %6.0f %6.1f' % (len(v) / conns, statistics.median(v) / 1e3, sum(v) / 1e6 / rounds))
                else:
                    row += '%22s' % '-'
            print(row)
        print()
    api_calls(bytag, sets)


def api_calls(bytag, sets):
    """cmtime's own calls over the whole run, every step (the disconnect's
    rdma_disconnect among them), where the files have their CPU time and
    switches: per call the median wall and CPU time (us) and the mean
    voluntary and involuntary switches."""
    for side in ('srv', 'cli'):
        by = collections.defaultdict(list)
        for s in sets:
            for tag, sd, f in bytag.get(s, []):
                if sd != side:
                    continue
                for c in load(f):
                    if c.kind == 'api' and c.cpu is not None:
                        by[(c.code, s)].append(c)
        if not by:
            continue
        print('== %s, cmtime\'s own calls, every step: wall/CPU us (median), '
              'voluntary/involuntary switches (mean)' %
              ('server (guest a)' if side == 'srv' else 'client (guest b)'))
        print('%-24s' % 'call' + ''.join('%26s' % s for s in sets))
        for code in sorted({k[0] for k in by}):
            row = '%-24s' % code
            for s in sets:
                v = by.get((code, s))
                if v:
                    row += '%26s' % ('%.0f/%.0f %.2f/%.2f' % (
                        statistics.median(c.end - c.start for c in v) / 1e3,
                        statistics.median(c.cpu for c in v) / 1e3,
                        statistics.mean(c.vcsw for c in v),
                        statistics.mean(c.ivcsw for c in v)))
                else:
                    row += '%26s' % '-'
            print(row)
        print()


if __name__ == '__main__':
    main()
