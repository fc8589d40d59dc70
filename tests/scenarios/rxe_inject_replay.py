# SPDX-License-Identifier: GPL-2.0
"""Replays an rxe_inject run on the host: which packets a driver counts.

    rxe_inject_replay.py LOG SEED PACKETS

LOG is guest a's rxe_inject.log (its first lines are the target's QP
numbers and keys), SEED the seed guest b printed, PACKETS the packets it
sent. Regenerates the same packets (rxe_inject.py, same random stream) and
runs each through a model of the C driver's receive checks up to the keys
(rxe_recv.c: the length and opcode checks of rxe_rcv, then hdr_check:
version, QPN, the QP's transport and state, a connected QP's path, the
P_Key, a datagram's Q_Key), then prints per class the packets that count in
bad_pkey_cntr and qkey_viol_cntr. The keys are checked before the ICRC, so
a packet with a bad ICRC counts too. Assumes the target's QP 1 (GSI) exists
and its UD QPs stay in RTS (they do: bad packets never reset them).
"""
import os, random, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxe_inject as X  # noqa: E402

NAMES = ("dead", "ud", "ud2", "ud_init", "rc_seq", "rc_psn", "rc_key", "rc_resp", "rc_any",
         "rc_path", "rc_init", "uc_any", "rkey", "addr", "len", "rkey2")


def load(path):
    info = {}
    for line in open(path):
        p = line.split()
        if len(p) == 2 and p[0] in NAMES and p[0] not in info:
            info[p[0]] = int(p[1])
    return info


def key_counter(info, p):
    """'pkey', 'qkey' or None: the counter the C driver moves for p."""
    if len(p) < 12:
        return None
    op = p[0]
    h = X.hdrs_of(op)
    if h is None:
        return None
    pad = (p[1] >> 4) & 3
    if len(p) < 12 + sum(X.HDR_LEN[c] for c in h) + pad + 4 or p[1] & 0xF:
        return None
    qpn = int.from_bytes(p[5:8], "big")
    # (transport, takes packets): the target's QPs, QP 1 the MAD layer's.
    qps = {1: (X.UD, True), info["ud"]: (X.UD, True), info["ud2"]: (X.UD, True),
           info["ud_init"]: (X.UD, False), info["rc_init"]: (X.RC, False),
           info["uc_any"]: (X.UC, True)}
    for k in ("rc_seq", "rc_psn", "rc_key", "rc_resp", "rc_any"):
        qps[info[k]] = (X.RC, True)
    if qpn not in qps:  # QPN 0, multicast, unknown, rc_path (another path)
        return None
    t, ready = qps[qpn]
    if op & 0xE0 != t or not ready:
        return None
    pkey = struct.unpack(">H", p[2:4])[0] & 0x7FFF
    if pkey != X.PKEY & 0x7FFF:
        return "pkey"
    if t == X.UD:
        want = X.GSI_QKEY if qpn == 1 else X.QKEY
        if struct.unpack(">I", p[12:16])[0] != want:
            return "qkey"
    return None


def main():
    log, seed, packets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    info = load(log)
    inj = X.Injector.__new__(X.Injector)
    inj.rng = random.Random(seed)
    inj.c = X.Ctx(info, inj.rng)
    inj.q = info
    # Addresses change the ICRCs only, not the random stream.
    inj.dst, inj.src, inj.dst6, inj.src6 = "192.0.2.1", "192.0.2.2", "fe80::1", "fe80::2"
    inj.s6, inj.ifindex = True, 0
    inj.live = {v for k, v in info.items() if k in NAMES[1:12]} | {0, 1, 0xFFFFFF, info["dead"]}
    inj.seq_psn, inj.sent, inj.outcome, inj.errors = 0, {}, {}, 0
    counted = {}

    def send(name, outcome, p):
        m = key_counter(info, p[1] if isinstance(p, tuple) else p)
        if m:
            counted[(m, name)] = counted.get((m, name), 0) + 1
        inj.sent[name] = inj.sent.get(name, 0) + 1
        inj.outcome[outcome] = inj.outcome.get(outcome, 0) + 1

    inj.send = send
    inj.run(packets, float("inf"))
    for m in ("pkey", "qkey"):
        per = {n: v for (k, n), v in counted.items() if k == m}
        print("%s: %d %s" % (m, sum(per.values()), per))
    print("expected by class: %s" % inj.outcome)


if __name__ == "__main__":
    main()
