#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stale connection, through librdmacm (ctypes), with QPs the RDMA CM
does not manage (only their numbers travel in the CM messages).
server MYIP PORT: accepts one connection, then must see it DISCONNECTED
(its CM disconnects it when the same remote QP asks again); a second
request must never reach it.
client PEERIP PORT: connects with QPN 0x1234 and establishes
(rdma_establish), then connects a second ID with the same QPN: it must be
REJECTED with reason 10 (IB_CM_REJ_STALE_CONN, cm.c's cm_match_req()),
and the first connection DISCONNECTED by the peer's DREQ."""
import ctypes, sys, time

from cm_lib import CONNECT_REQUEST, CONNECT_RESPONSE, DISCONNECTED, ESTABLISHED, EV, REJECTED, V, \
    cm, conn_param, get_event, new_id, sin

STALE_CONN = 10


def server(ip, port):
    ch = cm.rdma_create_event_channel()
    lid = new_id(ch)
    assert cm.rdma_bind_addr(lid, sin(ip, port)) == 0, "bind"
    assert cm.rdma_listen(lid, 8) == 0, "listen"
    print("listening", flush=True)
    conn = None
    seen = []
    while True:
        e = get_event(ch, 90)
        if e is None:
            break
        seen.append(e[1])
        if e[1] == CONNECT_REQUEST and conn is None:
            conn = e[0]
            assert cm.rdma_accept(V(conn), conn_param(qpn=0x5678)) == 0, "accept"
        if e[1] == DISCONNECTED:
            break
    ok = seen == [CONNECT_REQUEST, ESTABLISHED, DISCONNECTED]
    print("server saw", [EV.get(k, k) for k in seen], "ok" if ok else "FAIL")
    return 0 if ok else 1


def connect(ch, ip, port, qpn):
    i = new_id(ch)
    assert cm.rdma_resolve_addr(i, None, sin(ip, port), 2000) == 0
    assert get_event(ch, 10)[1] == 0, "address"
    assert cm.rdma_resolve_route(i, 2000) == 0
    assert get_event(ch, 10)[1] == 2, "route"
    assert cm.rdma_connect(i, conn_param(qpn=qpn)) == 0, "connect %d" % ctypes.get_errno()
    return i


def client(ip, port):
    ch = cm.rdma_create_event_channel()
    first = connect(ch, ip, port, 0x1234)
    e = get_event(ch, 30)
    assert e and e[1] == CONNECT_RESPONSE, "first connection: %r" % (e,)
    assert cm.rdma_establish(first) == 0, "establish"
    time.sleep(1)  # the RTU reaches the server before the second REQ
    start = time.time()
    connect(ch, ip, port, 0x1234)
    rejected = disconnected = False
    while not (rejected and disconnected):
        e = get_event(ch, 30)
        if e is None:
            break
        if e[1] == REJECTED and e[0] != first.value:
            rejected = e[2] == STALE_CONN
            print("second connection rejected after %.2fs" % (time.time() - start))
        if e[1] == DISCONNECTED and e[0] == first.value:
            disconnected = True
    print("stale REJ %s, first connection disconnected %s" % (rejected, disconnected))
    return 0 if rejected and disconnected else 1


if __name__ == "__main__":
    f = server if sys.argv[1] == "server" else client
    sys.exit(f(sys.argv[2], int(sys.argv[3])))
