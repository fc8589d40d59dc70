#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""RoCEv2 timing on the guests' link, from a QEMU filter-dump pcap.

    pcap-timing.py [--gap S] [--ip A.B.C.D] [--pingpong] FILE.pcap

FILE is what tests/guest/run-pair.sh writes with RRXE_QEMU_PCAP=1 (one
guest's link NIC, both directions, host timestamps in microseconds). The
RoCEv2 packets (UDP 4791) are cut into transfers at pauses longer than
--gap seconds (1.0); per transfer it prints the packets each way, the
duration, and how the sending side paced itself: the gaps between
consecutive requests (median, p90, the share of the time spent in gaps
over 1 ms), the requests in flight (sent, not yet covered by an ACK's
PSN) when each ACK arrived, and the time from an ACK to the next request.
--ip names the requester (the guest whose file it is, by default the
source of the first packet). Only the first 128 bytes of a packet are
needed (the BTH and AETH).

--pingpong reads a ping-pong (ib_send_lat, ib_write_lat: each side sends
one message when the other's arrives) from the side of the guest whose
file it is (--ip, by default the source of the first packet): per
transfer, the median and p90 of the time from the other side's request
arriving to this guest's ACK of it leaving (its responder), from that ACK
to this guest's own next request (its application seeing the message,
posting, and its requester), and from its request leaving to the other
side's next request arriving (the wire both ways and the other guest's
whole turnaround). The times are host times at this guest's NIC.
"""
import argparse
import struct
import sys

ROCE_PORT = 4791


def packets(path):
    """(time in s, src ip, dst ip, opcode, psn, aeth syndrome or None)."""
    with open(path, 'rb') as f:
        hdr = f.read(24)
        magic = struct.unpack('<I', hdr[:4])[0]
        if magic == 0xa1b2c3d4:
            endian, scale = '<', 1e-6
        elif magic == 0xd4c3b2a1:
            endian, scale = '>', 1e-6
        elif magic == 0xa1b23c4d:
            endian, scale = '<', 1e-9
        else:
            sys.exit(f'{path}: not a pcap file')
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, _orig = struct.unpack(endian + 'IIII', rec)
            data = f.read(incl)
            t = sec + frac * scale
            if len(data) < 14 + 20 + 8 + 12:
                continue
            if struct.unpack('!H', data[12:14])[0] != 0x0800:
                continue
            ihl = (data[14] & 0xf) * 4
            if data[14 + 9] != 17:
                continue
            src = '.'.join(str(b) for b in data[26:30])
            dst = '.'.join(str(b) for b in data[30:34])
            udp = 14 + ihl
            if struct.unpack('!H', data[udp + 2:udp + 4])[0] != ROCE_PORT:
                continue
            bth = udp + 8
            opcode = data[bth]
            psn = struct.unpack('!I', data[bth + 8:bth + 12])[0] & 0xffffff
            syndrome = None
            if opcode in (0x11, 0x12) and len(data) >= bth + 13:  # RC ACK, ATOMIC ACK
                syndrome = data[bth + 12]
            yield t, src, dst, opcode, psn, syndrome


def pct(v, p):
    if not v:
        return float('nan')
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]


def report(n, pkts, req_ip):
    reqs = [p for p in pkts if p[1] == req_ip]
    resps = [p for p in pkts if p[1] != req_ip]
    if not reqs:
        return
    t0, t1 = pkts[0][0], pkts[-1][0]
    dur = t1 - t0
    print(f'transfer {n}: {len(reqs)} requests, {len(resps)} responses, {dur * 1e3:.1f} ms')
    gaps = [b[0] - a[0] for a, b in zip(reqs, reqs[1:])]
    long_gaps = sum(g for g in gaps if g > 1e-3)
    print(f'  request gaps: median {pct(gaps, 0.5) * 1e6:.0f} us, p90 {pct(gaps, 0.9) * 1e6:.0f} us, '
          f'max {max(gaps, default=0) * 1e3:.1f} ms; gaps over 1 ms {long_gaps * 1e3:.1f} ms '
          f'({100 * long_gaps / dur if dur else 0:.0f} % of the transfer)')
    # In flight at each ACK, and from an ACK to the next request.
    inflight, to_next = [], []
    ri = 0
    for t, _s, _d, op, psn, syn in resps:
        while ri < len(reqs) and reqs[ri][0] <= t:
            ri += 1
        if ri:
            last_psn = reqs[ri - 1][4]
            inflight.append((last_psn - psn) & 0xffffff)
        if ri < len(reqs):
            to_next.append(reqs[ri][0] - t)
    print(f'  in flight at an ACK: median {pct(inflight, 0.5)}, p10 {pct(inflight, 0.1)}, '
          f'p90 {pct(inflight, 0.9)}; ACK to next request: median {pct(to_next, 0.5) * 1e6:.0f} us, '
          f'p90 {pct(to_next, 0.9) * 1e6:.0f} us')
    # Bursts: requests sent less than 100 us apart.
    bursts, cur = [], 1
    for g in gaps:
        if g < 100e-6:
            cur += 1
        else:
            bursts.append(cur)
            cur = 1
    bursts.append(cur)
    print(f'  bursts (< 100 us apart): {len(bursts)}, median {pct(bursts, 0.5)} requests, p90 {pct(bursts, 0.9)}')


def pingpong(n, pkts, me):
    responder, requester, other = [], [], []
    came = acked = sent = None
    for t, src, _d, op, _psn, _syn in pkts:
        is_ack = op == 0x11
        if src != me and not is_ack:
            came = t
            if sent is not None:
                other.append(t - sent)
                sent = None
        elif src == me and is_ack and came is not None:
            responder.append(t - came)
            came, acked = None, t
        elif src == me and not is_ack:
            if acked is not None:
                requester.append(t - acked)
                acked = None
            sent = t

    def us(v):
        return f'{pct(v, 0.5) * 1e6:.0f}/{pct(v, 0.9) * 1e6:.0f} us'
    print(f'transfer {n}: {len(pkts)} packets; median/p90: request in -> ACK out {us(responder)}, '
          f'ACK out -> own request out {us(requester)}, own request out -> next request in {us(other)}')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--gap', type=float, default=1.0)
    ap.add_argument('--ip')
    ap.add_argument('--pingpong', action='store_true')
    ap.add_argument('pcap')
    a = ap.parse_args()
    show = pingpong if a.pingpong else report
    pkts = list(packets(a.pcap))
    if not pkts:
        sys.exit('no RoCEv2 packets')
    req_ip = a.ip or pkts[0][1]
    cur, n = [pkts[0]], 0
    for p in pkts[1:]:
        if p[0] - cur[-1][0] > a.gap:
            if len(cur) > 100:
                n += 1
                show(n, cur, req_ip)
            cur = []
        cur.append(p)
    if len(cur) > 100:
        show(n + 1, cur, req_ip)


if __name__ == '__main__':
    main()
