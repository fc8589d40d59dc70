# SPDX-License-Identifier: GPL-2.0
"""Crafted RoCE v2 packets to the peer's rdma_rxe (rxe_inject.sh).

    rxe_inject.py INFO DST SRC PACKETS SECONDS SEED [DST6 SRC6]

INFO is the target's file (rxe_inject.c: QP numbers, keys); DST/SRC the
peer's and this guest's IPv4 addresses (DST6/SRC6 their IPv6 link-local
ones, optional). Sends PACKETS packets (or as many as SECONDS allow), a
round of every class below after another, from UDP port SPORT to 4791 of
DST over a plain UDP socket: unconnected and with DF, so the kernel sends
IP ID 0 and the whole IP and UDP headers are known for the ICRC. Prints
one JSON object: the packets sent per class and the totals the receiver's
counters must show:

  pass  accepted by the receive checks (rcvd_pkts counts them),
  resp  accepted responses (also counted in ack_deferred),
  pkey  dropped for the P_Key (bad_pkey_cntr),
  qkey  dropped for the Q_Key (qkey_viol_cntr),
  drop  dropped uncounted,
  any   to a QP the target resets when it falls in error: accepted or
        dropped depending on when they arrive.
"""
import json, os, random, socket, struct, sys, time, zlib

PORT, SPORT = 4791, 50791
QKEY, GSI_QKEY = 0x11111111, 0x80010000
PKEY = 0xFFFF
MTU = 1024
RC, UC, RD, UD = 0x00, 0x20, 0x40, 0x60

# Headers after the BTH, by operation (the low 5 opcode bits): RETH 16,
# IMMDT 4, AETH 4, AtomicAckETH 8, AtomicETH 28, IETH 4, FETH 4.
OP_HDRS = {
    0: "", 1: "", 2: "", 3: "I", 4: "", 5: "I", 6: "R", 7: "", 8: "",
    9: "I", 10: "R", 11: "RI", 12: "R", 13: "A", 14: "", 15: "A", 16: "A",
    17: "A", 18: "AK", 19: "T", 20: "T", 22: "E", 23: "E", 28: "FR", 29: "R",
}
HDR_LEN = {"R": 16, "I": 4, "A": 4, "K": 8, "T": 28, "E": 4, "F": 4, "D": 8, "d": 4}
VALID = {
    RC: [o for o in OP_HDRS],
    UC: list(range(0, 12)),
    RD: list(range(0, 21)),
    UD: [4, 5],
}
RESPONSES = [13, 14, 15, 16, 17, 18]  # RDMA READ responses, ACK, ATOMIC ACK


def hdrs_of(opcode):
    """The extension header letters of a valid opcode (None if unknown)."""
    t, op = opcode & 0xE0, opcode & 0x1F
    if op not in VALID.get(t, []):
        return None
    h = OP_HDRS[op]
    if t == RD:
        h = "dD" + h
    elif t == UD:
        h = "D" + h
    return h


def bth(opcode, qpn, psn=0, pkey=PKEY, pad=0, tver=0, se=0, ackreq=0):
    return struct.pack(">BBHII", opcode, (se << 7) | (pad << 4) | tver, pkey,
                       qpn & 0xFFFFFF, (ackreq << 31) | (psn & 0xFFFFFF))


class Ctx:
    def __init__(self, info, rng):
        self.q = info
        self.rng = rng
        self.va = info["addr"]
        self.rkey = info["rkey"]

    def ext(self, h, qkey=QKEY, length=0, va=None, rkey=None):
        """Extension headers `h` with plausible contents."""
        r = self.rng
        va = self.va if va is None else va
        rkey = self.rkey if rkey is None else rkey
        out = b""
        for c in h:
            if c == "d":
                out += struct.pack(">I", r.getrandbits(24))
            elif c == "D":
                out += struct.pack(">II", qkey, r.getrandbits(24))
            elif c == "R":
                out += struct.pack(">QII", va, rkey, length)
            elif c == "I":
                out += struct.pack(">I", r.getrandbits(32))
            elif c == "A":
                out += struct.pack(">I", r.getrandbits(32))
            elif c == "K":
                out += struct.pack(">Q", r.getrandbits(64))
            elif c == "T":
                out += struct.pack(">QIQQ", va & ~7, rkey, 1, 0)
            elif c == "E":
                out += struct.pack(">I", r.getrandbits(32))
            elif c == "F":
                out += struct.pack(">I", 0x01)
        return out


def ip4_hdr(src, dst, udp_len):
    # TOS, TTL and checksum are masked in the ICRC: any value.
    return struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                       socket.inet_aton(src), socket.inet_aton(dst))


def ip6_hdr(src, dst, udp_len):
    return struct.pack(">IHBB16s16s", 0x60000000, udp_len, 17, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst))


def icrc(ip, pkt):
    """The ICRC of pkt (BTH to before the ICRC) sent in ip (rxe_icrc.c):
    the CRC-32 of 8 bytes of ones, the IP, UDP and BTH with their variant
    fields set to ones, then the rest; stored least significant byte first.
    zlib's CRC-32 starts from ones and complements its result as the ICRC
    does."""
    ip = bytearray(ip)
    if ip[0] >> 4 == 4:
        ip[1] = ip[8] = ip[10] = ip[11] = 0xFF  # TOS, TTL, checksum
    else:
        ip[0] |= 0x0F
        ip[1] = ip[2] = ip[3] = ip[7] = 0xFF  # traffic class, flow label, hop limit
    udp = struct.pack(">HHH", SPORT, PORT, 8 + len(pkt) + 4) + b"\xff\xff"
    b = bytearray(pkt[:12])
    b[4] = 0xFF  # FECN, BECN, reserved
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + udp + bytes(b) + pkt[12:])
    return struct.pack("<I", crc)


class Injector:
    def __init__(self, info, dst, src, dst6, src6, seed):
        self.rng = random.Random(seed)
        self.c = Ctx(info, self.rng)
        self.q = info
        self.dst, self.src, self.dst6, self.src6 = dst, src, dst6, src6
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER: DO (DF, ID 0)
        self.s.bind((src, SPORT))
        # Over the path MTU: fragmented (IP ID not 0, so a wrong ICRC).
        self.sf = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sf.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_PMTUDISC_DONT
        self.sf.bind((src, SPORT + 1))
        self.s6 = None
        if dst6:
            self.ifindex = socket.if_nametoindex("eth0")
            self.s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            try:
                self.s6.bind((src6, SPORT, 0, self.ifindex))
            except OSError as e:
                print("no IPv6 (%s)" % e, file=sys.stderr)
                self.s6 = None
        self.live = {v for k, v in info.items()
                     if k in ("ud", "ud2", "ud_init", "rc_seq", "rc_psn", "rc_key",
                              "rc_resp", "rc_any", "rc_path", "rc_init", "uc_any")}
        self.live |= {0, 1, 0xFFFFFF, info["dead"]}
        self.seq_psn = 0
        self.sent = {}
        self.outcome = {}
        self.errors = 0

    # --- building ---------------------------------------------------------
    def packet(self, opcode, qpn, payload=b"", psn=0, pkey=PKEY, qkey=QKEY, length=None,
               va=None, rkey=None, pad=None, tver=0, good=True, ip6=False, ackreq=0):
        h = hdrs_of(opcode)
        if pad is None:
            pad = -len(payload) & 3
        ext = self.c.ext(h or "", qkey, len(payload) if length is None else length, va, rkey)
        p = bth(opcode, qpn, psn, pkey, pad, tver, ackreq=ackreq) + ext + payload + bytes(pad)
        ip = (ip6_hdr(self.src6, self.dst6, 8 + len(p) + 4) if ip6
              else ip4_hdr(self.src, self.dst, 8 + len(p) + 4))
        crc = icrc(ip, p)
        if not good:
            crc = bytes(a ^ b for a, b in zip(crc, struct.pack("<I", self.rng.randrange(1, 1 << 32))))
        return p + crc

    def payload(self, long=None):
        r = self.rng
        if long is None:
            long = r.random() < 0.5
        n = r.choice([MTU, MTU - 1, 1100, 1400]) if long else r.choice([0, 1, 2, 3, 7, 64])
        return r.randbytes(n)

    def gsi_mad(self):
        # Random MADs, all but 1 in 64 with the base version the MAD layer
        # understands (1), so that they get past it to its class and agent
        # checks (and the odd unmatched Get/Set to its reply). ib_core logs
        # each MAD of another base version with an unratelimited pr_err
        # ("MAD received with unsupported base version"): thousands of those
        # on the serial console stalled a guest of the C set
        # (Documentation/reliability.rst), so only a few are sent.
        r = self.rng
        mad = bytearray(r.randbytes(256))
        if r.randrange(64):
            mad[0] = 1
        return self.packet(UD | 4, 1, bytes(mad), qkey=GSI_QKEY)

    def other_qpn(self):
        while True:
            q = self.rng.getrandbits(24)
            if q not in self.live:
                return q

    def rand_opcode(self, t):
        return t | self.rng.choice(VALID[t])

    # --- the classes: (name, outcome, generator) ------------------------------
    def classes(self):
        q, r = self.q, self.rng
        c = []

        def add(name, outcome, gen, weight=1):
            c.extend([(name, outcome, gen)] * weight)

        # Accepted: a UD QP's valid sends (completions in the target: the
        # ICRC computed here is the driver's).
        add("ud_good", "pass", lambda: self.packet(
            UD | r.choice([4, 5]), q["ud"], r.randbytes(r.randrange(0, MTU + 1))), 3)
        if self.s6:
            add("ud_good_ipv6", "pass", lambda: self.packet(
                UD | 4, q["ud"], r.randbytes(r.randrange(0, MTU + 1)), ip6=True))
        # The GSI QP (QPN 1, the well-known Q_Key): random MADs.
        # (The gsi_ outcomes count only where the receiver has a GSI QP.)
        add("gsi_mad", "gsi_pass", self.gsi_mad)
        # Every UD opcode, short and long payloads (beyond the MTU too).
        add("ud_any", "pass", lambda: self.packet(self.rand_opcode(UD), q["ud2"], self.payload()))
        # RC in sequence: sends, writes, reads, atomics within the MR.
        add("rc_seq", "pass", self.rc_seq, 2)
        # PSNs far out of the window (ahead: out of sequence; behind: duplicates).
        add("rc_psn_far", "pass", lambda: self.packet(
            RC | r.choice([4, 10, 12, 19, 20, 0, 6]), q["rc_psn"], self.payload(False),
            psn=r.randrange(0x1000, 0xFFF000), length=64))
        # Responses with nothing outstanding.
        add("rc_resp", "resp", lambda: self.packet(
            RC | r.choice(RESPONSES), q["rc_resp"], self.payload(), psn=r.getrandbits(24)))
        # Keys and lengths: another PD's rkey, a random rkey, beyond the MR,
        # unaligned atomics (the target resets the QP after each error).
        add("rc_bad_rkey", "any", self.rc_bad_rkey, 2)
        # Every RC and UC opcode, short and long payloads, random PSNs.
        add("rc_any", "any", lambda: self.packet(
            self.rand_opcode(RC), q["rc_any"], self.payload(), psn=r.randrange(0, 4)))
        add("uc_any", "any", lambda: self.packet(
            self.rand_opcode(UC), q["uc_any"], self.payload(), psn=r.randrange(0, 4)))
        # The multicast QPN to a unicast address: accepted, no group.
        add("mcast_qpn", "pass", lambda: self.packet(UD | 4, 0xFFFFFF, self.payload(False)))

        # Dropped for a key, counted.
        add("bad_pkey", "pkey", self.bad_pkey, 2)
        add("bad_pkey_gsi", "gsi_pkey", lambda: self.bad_pkey(gsi=True))
        add("bad_qkey", "qkey", self.bad_qkey)
        add("bad_qkey_gsi", "gsi_qkey", lambda: self.bad_qkey(gsi=True))

        # Dropped uncounted.
        add("bad_icrc", "drop", self.bad_icrc, 3)
        add("unknown_qpn", "drop", lambda: self.packet(
            self.rand_opcode(r.choice([RC, UC, UD])), self.other_qpn(), self.payload()))
        add("destroyed_qpn", "drop", lambda: self.packet(UD | 4, q["dead"], self.payload(False)))
        add("wrong_transport", "drop", self.wrong_transport)
        add("qp_not_ready", "drop", lambda: self.packet(
            *r.choice([(UD | 4, q["ud_init"]), (RC | 4, q["rc_init"])]), self.payload(False),
            pkey=r.choice([PKEY, 0x1234])))
        add("rc_other_path", "drop", lambda: self.packet(
            RC | 4, q["rc_path"], self.payload(False), pkey=r.choice([PKEY, 0x1234])))
        add("rd_opcodes", "drop", lambda: self.packet(
            self.rand_opcode(RD), r.choice([q["ud"], q["rc_seq"], q["uc_any"], 1]),
            self.payload()))
        add("unknown_opcode", "drop", self.unknown_opcode)
        add("short_bth", "drop", lambda: r.randbytes(r.randrange(0, 12)))
        add("short_headers", "drop", self.short_headers)
        add("pad_over_payload", "drop", self.pad_over)
        add("bad_tver", "drop", lambda: self.packet(
            UD | 4, q["ud"], self.payload(False), tver=r.randrange(1, 16)))
        add("qpn0", "drop", lambda: self.packet(self.rand_opcode(UD), 0, self.payload(False)))
        add("random", "drop", self.random_bytes, 2)
        add("fragmented", "drop", lambda: ("frag", self.packet(UD | 4, q["ud"], r.randbytes(3000))))
        return c

    def rc_seq(self):
        r, q = self.rng, self.q
        kind = r.randrange(4)
        psn = self.seq_psn
        self.seq_psn = (psn + 1) & 0xFFFFFF
        if kind == 0:
            return self.packet(RC | 4, q["rc_seq"], r.randbytes(r.randrange(0, MTU + 1)), psn=psn)
        if kind == 1:
            n = r.randrange(0, MTU + 1)
            return self.packet(RC | 10, q["rc_seq"], r.randbytes(n), psn=psn,
                               va=q["addr"] + r.randrange(0, q["len"] - n + 1))
        if kind == 2:
            n = r.randrange(1, MTU + 1)
            return self.packet(RC | 12, q["rc_seq"], psn=psn, length=n,
                               va=q["addr"] + r.randrange(0, q["len"] - n + 1))
        return self.packet(RC | 20, q["rc_seq"], psn=psn,
                           va=q["addr"] + 8 * r.randrange(0, q["len"] // 8))

    def rc_bad_rkey(self):
        r, q = self.rng, self.q
        op = r.choice([10, 12, 19, 20, 6, 11])
        case = r.randrange(5)
        va, rkey, length = q["addr"], q["rkey"], 64
        if case == 0:
            rkey = q["rkey2"]  # another PD's MR
        elif case == 1:
            rkey = r.getrandbits(32)
        elif case == 2:
            length = q["len"] + r.randrange(1, 1 << 20)  # beyond the MR
        elif case == 3:
            va = q["addr"] + q["len"] - r.randrange(0, 32) + (3 if op in (19, 20) else 0)
        else:
            va = r.getrandbits(64)
        payload = r.randbytes(64) if op in (6, 10, 11) else b""
        return self.packet(RC | op, q["rc_key"], payload, psn=0, length=length, va=va, rkey=rkey)

    def bad_pkey(self, gsi=False):
        r, q = self.rng, self.q
        pkey = r.choice([0x0000, 0x8000, 0x1234, 0xFFFE, 0x7FFE, 0x0001])
        # QPs the target never resets (a reset one would drop it first).
        t, qpn = (UD, 1) if gsi else r.choice([(UD, q["ud"]), (UD, q["ud2"]), (RC, q["rc_seq"]),
                                               (RC, q["rc_psn"]), (RC, q["rc_resp"])])
        op = UD | 4 if t == UD else self.rand_opcode(t)
        # The P_Key is checked before the ICRC: a bad ICRC too is counted.
        return self.packet(op, qpn, self.payload(False), pkey=pkey, psn=0x800000,
                           good=r.random() < 0.5)

    def bad_qkey(self, gsi=False):
        r, q = self.rng, self.q
        qpn = 1 if gsi else r.choice([q["ud"], q["ud2"]])
        right = GSI_QKEY if qpn == 1 else QKEY
        qkey = right
        while qkey == right:
            qkey = r.choice([0, QKEY, QKEY + 1, GSI_QKEY, r.getrandbits(32)])
        # The Q_Key too is checked before the ICRC: a bad ICRC is counted.
        return self.packet(UD | r.choice([4, 5]), qpn, self.payload(False), qkey=qkey,
                           good=r.random() < 0.5)

    def bad_icrc(self):
        r, q = self.rng, self.q
        t, qpn = r.choice([(UD, q["ud"]), (UD, q["ud2"]), (UD, 1), (RC, q["rc_seq"]),
                           (RC, q["rc_resp"]), (UC, q["uc_any"]), (UD, 0xFFFFFF)])
        # Every key right: the keys are checked before the ICRC (rxe_recv.c
        # hdr_check, then rxe_icrc_check), so QP 1 needs the GSI Q_Key here
        # lest a bad key count it in qkey_viol_cntr.
        return self.packet(self.rand_opcode(t), qpn, self.payload(), psn=0x800000,
                           qkey=GSI_QKEY if qpn == 1 else QKEY, good=False)

    def wrong_transport(self):
        r, q = self.rng, self.q
        t, qpn = r.choice([(RC, q["ud"]), (UC, q["ud2"]), (UD, q["rc_seq"]), (UC, q["rc_resp"]),
                           (RC, q["uc_any"]), (RC, 1), (UC, 1)])
        return self.packet(self.rand_opcode(t), qpn, self.payload(False))

    def unknown_opcode(self):
        r, q = self.rng, self.q
        op = r.choice([o for o in range(256) if hdrs_of(o) is None])
        p = bth(op, r.choice([q["ud"], q["rc_seq"], 1]), 0) + r.randbytes(r.randrange(0, 64))
        ip = ip4_hdr(self.src, self.dst, 8 + len(p) + 4)
        return p + icrc(ip, p)

    def short_headers(self):
        r, q = self.rng, self.q
        t, qpn = r.choice([(RC, q["rc_seq"]), (UC, q["uc_any"]), (UD, q["ud"]), (RD, q["ud"])])
        op = self.rand_opcode(t)
        need = 12 + sum(HDR_LEN[c] for c in hdrs_of(op)) + 4
        full = self.packet(op, qpn, b"")
        return full[:r.randrange(12, need)]

    def pad_over(self):
        r, q = self.rng, self.q
        pad = r.randrange(1, 4)
        n = r.randrange(0, pad)
        t, qpn = r.choice([(UD, q["ud"]), (RC, q["rc_resp"]), (UC, q["uc_any"])])
        op = self.rand_opcode(t)
        h = hdrs_of(op)
        p = bth(op, qpn, 0, pad=pad) + self.c.ext(h, QKEY, n) + r.randbytes(n)
        ip = ip4_hdr(self.src, self.dst, 8 + len(p) + 4)
        return p + icrc(ip, p)

    def random_bytes(self):
        r = self.rng
        while True:
            p = bytearray(r.randbytes(r.randrange(12, 1400)))
            if int.from_bytes(p[5:8], "big") not in self.live:
                return bytes(p)

    # --- sending ----------------------------------------------------------
    def send(self, name, outcome, p):
        sock, dst = self.s, (self.dst, PORT)
        if isinstance(p, tuple):
            sock, p = self.sf, p[1]
        elif name == "ud_good_ipv6":
            sock, dst = self.s6, (self.dst6, PORT, 0, self.ifindex)
        try:
            sock.sendto(p, dst)
        except OSError as e:
            self.errors += 1
            if self.errors < 5:
                print("send %s: %s" % (name, e), file=sys.stderr)
            return
        self.sent[name] = self.sent.get(name, 0) + 1
        self.outcome[outcome] = self.outcome.get(outcome, 0) + 1

    def run(self, packets, seconds):
        classes = self.classes()
        # Packets of each class made ahead, reused round after round (but for
        # rc_seq, whose PSNs follow each other): building costs more than
        # sending under TCG.
        pools = {}
        t0 = time.monotonic()
        deadline = t0 + seconds
        n = 0
        while n < packets and time.monotonic() < deadline:
            for i, (name, outcome, gen) in enumerate(classes):
                if name == "rc_seq":
                    p = gen()
                else:
                    pool = pools.setdefault(i, [])
                    if len(pool) < 32:
                        pool.append(gen())
                        p = pool[-1]
                    else:
                        p = pool[self.rng.randrange(32)]
                self.send(name, outcome, p)
                n += 1
                if n >= packets:
                    break
        el = time.monotonic() - t0
        return {
            "packets": sum(self.sent.values()),
            "seconds": round(el, 1),
            "rate": int(sum(self.sent.values()) / el) if el else 0,
            "send_errors": self.errors,
            "classes": self.sent,
            "expect": self.outcome,
            "datagrams": sum(self.sent.values()),
        }


def main():
    info_file, dst, src, packets, seconds, seed = sys.argv[1:7]
    dst6, src6 = (sys.argv[7], sys.argv[8]) if len(sys.argv) > 8 else (None, None)
    info = {}
    with open(info_file) as f:
        for line in f:
            k, v = line.split()
            info[k] = int(v)
    inj = Injector(info, dst, src, dst6, src6, int(seed))
    res = inj.run(int(packets), float(seconds))
    res["seed"] = int(seed)
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
