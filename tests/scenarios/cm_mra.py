#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A slow passive side: MRA, then the connection succeeds (librdmacm, ctypes).
server MYIP PORT: takes the connect request, creates its QP and does not
accept until its CM has answered the client's retransmitted REQ with an
MRA (cm_tx_msgs/mra grew; the RDMA CM's REQ handler called
ib_prepare_cm_mra(), so a duplicate REQ is answered with an MRA), at most
MAXWAIT seconds; then accepts and must see ESTABLISHED and DISCONNECTED.
client PEERIP PORT: connects (RC QP, the RDMA CM's REQ: 15 retries of
2 * 2^(16-8) + 2^(20-8) = 4608 ms); it must see ESTABLISHED, not
UNREACHABLE, and its CM must have received the MRA (cm_rx_msgs/mra grew);
then disconnects."""
import ctypes, struct, sys, time

import cm_lib
from cm_lib import CONNECT_REQUEST, DISCONNECTED, ESTABLISHED, EV, V, cm, get_event, new_id, sin

MAXWAIT = 20
CMDIR = "/sys/class/infiniband/rxe0/ports/1"


def counter(group, name):
    with open("%s/%s/%s" % (CMDIR, group, name)) as f:
        return int(f.read())


def counters():
    return {"%s/%s" % (g, n): counter(g, n) for g in ("cm_tx_msgs", "cm_rx_msgs",
            "cm_tx_retries", "cm_rx_duplicates") for n in ("req", "mra", "rep", "rtu")}


def delta(before):
    now = counters()
    return {k: now[k] - before[k] for k in now if now[k] != before[k]}


def conn_param():
    # One read in flight each way; the QPN is the ID's QP's.
    return cm_lib.conn_param(depth=1)


def create_qp(cid):
    # struct ibv_qp_init_attr: no context, CQs (librdmacm makes them) or
    # SRQ; 4 WRs and 1 SGE each way, no inline data; RC; signal all.
    attr = struct.pack("=QQQQIIIIIii4x", 0, 0, 0, 0, 4, 4, 1, 1, 0, 2, 1)
    assert cm.rdma_create_qp(cid, None, attr) == 0, "create_qp %d" % ctypes.get_errno()


def server(ip, port):
    ch = cm.rdma_create_event_channel()
    lid = new_id(ch)
    assert cm.rdma_bind_addr(lid, sin(ip, port)) == 0, "bind"
    assert cm.rdma_listen(lid, 8) == 0, "listen"
    before = counters()
    print("listening", flush=True)
    e = get_event(ch, 60)
    assert e and e[1] == CONNECT_REQUEST, "no connect request: %r" % (e,)
    conn = V(e[0])
    create_qp(conn)
    mra0 = before["cm_tx_msgs/mra"]
    end = time.time() + MAXWAIT
    while counter("cm_tx_msgs", "mra") == mra0 and time.time() < end:
        time.sleep(0.1)
    print("%.2f server: MRA %s, accepting" % (time.time() - T0,
          "sent" if counter("cm_tx_msgs", "mra") > mra0 else "NOT sent in %d s" % MAXWAIT), flush=True)
    assert cm.rdma_accept(conn, conn_param()) == 0, "accept %d" % ctypes.get_errno()
    seen = [CONNECT_REQUEST]
    while True:
        e = get_event(ch, 60)
        if e is None:
            break
        seen.append(e[1])
        if e[1] == DISCONNECTED:
            cm.rdma_disconnect(conn)
            break
    cm.rdma_destroy_qp(conn)
    cm.rdma_destroy_id(conn)
    cm.rdma_destroy_id(lid)
    d = delta(before)
    print("server counters:", d)
    ok = seen == [CONNECT_REQUEST, ESTABLISHED, DISCONNECTED] and d.get("cm_tx_msgs/mra", 0) >= 1 \
        and d.get("cm_rx_duplicates/req", 0) >= 1
    print("server saw", [EV.get(k, k) for k in seen], "ok" if ok else "FAIL")
    return 0 if ok else 1


def client(ip, port):
    ch = cm.rdma_create_event_channel()
    before = counters()
    i = new_id(ch)
    assert cm.rdma_resolve_addr(i, None, sin(ip, port), 2000) == 0
    assert get_event(ch, 10)[1] == 0, "address"
    assert cm.rdma_resolve_route(i, 2000) == 0
    assert get_event(ch, 10)[1] == 2, "route"
    create_qp(i)
    start = time.time()
    assert cm.rdma_connect(i, conn_param()) == 0, "connect %d" % ctypes.get_errno()
    e = get_event(ch, MAXWAIT + 40)
    established = e is not None and e[1] == ESTABLISHED
    print("connection %s after %.2f s" % ("ESTABLISHED" if established else "FAILED: %r" % (e,),
          time.time() - start))
    disconnected = False
    if established:
        time.sleep(0.5)
        assert cm.rdma_disconnect(i) == 0, "disconnect"
        e = get_event(ch, 30)
        disconnected = e is not None and e[1] == DISCONNECTED
    cm.rdma_destroy_qp(i)
    cm.rdma_destroy_id(i)
    d = delta(before)
    print("client counters:", d)
    ok = established and disconnected and d.get("cm_rx_msgs/mra", 0) >= 1 \
        and d.get("cm_tx_retries/req", 0) >= 1
    print("client", "ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    T0 = cm_lib.T0 = time.time()
    f = server if sys.argv[1] == "server" else client
    sys.exit(f(sys.argv[2], int(sys.argv[3])))
