#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Private data of connection events, through librdmacm (ctypes, no QP).
server MYIP PORT SYNCFILE: listen; the first request must carry the
client's private data (the IB CM REQ's room after the RDMA CM's header: 56
bytes, the rest zero); accept it with private data, await ESTABLISHED;
reject the second request with private data.
client PEERIP PORT: connect with private data; CONNECT_RESPONSE must carry
the server's (the REP's room: 196 bytes), establish; connect again, REJECTED
(consumer defined, 28) must carry the reject's (the REJ's room: 148)."""
import ctypes, os, sys, time

from rdmacm import *

REQ_DATA = bytes(range(1, 41))            # 40 of the REQ's 56 bytes
REP_DATA = b"accepted by the server" * 4  # 88 of the REP's 196
REJ_DATA = b"no second one" + bytes([0xa5]) * 20
REQ_ROOM, REP_ROOM, REJ_ROOM = 56, 196, 148


def expect(what, got, data, room):
    want = data + bytes(room - len(data))
    if got != want:
        print("%s: private data %d bytes %r, want %d bytes %r" % (what, len(got), got[:48], room, want[:48]))
        return 1
    print("%s: %d bytes of private data as sent" % (what, len(got)))
    return 0


def next_event(ch, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        e = get_event(ch, private=True)
        if e is not None:
            print("event", EV.get(e[1], e[1]), "status", e[2])
            return e
        time.sleep(0.05)
    return None


def server(ip, port, sync):
    ch, fd, _ = listen(ip, port, 4, sync)
    os.set_blocking(fd, False)
    bad = 0
    e = next_event(ch, 60)
    if not e or e[1] != CONNECT_REQUEST:
        print("no connection request: %r" % (e,))
        return 1
    bad += expect("CONNECT_REQUEST", e[3], REQ_DATA, REQ_ROOM)
    rep = ctypes.create_string_buffer(REP_DATA, len(REP_DATA))
    assert cm.rdma_accept(ctypes.c_void_p(e[0]), conn_param(0x2222, rep)) == 0, "accept"
    e = next_event(ch, 60)
    if not e or e[1] != ESTABLISHED:
        print("not established: %r" % (e,))
        return 1
    e = next_event(ch, 60)
    if not e or e[1] != CONNECT_REQUEST:
        print("no second connection request: %r" % (e,))
        return 1
    rej = ctypes.create_string_buffer(REJ_DATA, len(REJ_DATA))
    assert cm.rdma_reject(ctypes.c_void_p(e[0]), rej, len(REJ_DATA)) == 0, "reject"
    return bad


def connect(ch, ip, port, qp_num, data):
    i = new_id(ch)
    assert cm.rdma_resolve_addr(i, None, sin(ip, port), 2000) == 0
    e = next_event(ch, 30)
    assert e and e[1] == ADDR_RESOLVED, "addr %r" % (e,)
    assert cm.rdma_resolve_route(i, 2000) == 0
    e = next_event(ch, 30)
    assert e and e[1] == ROUTE_RESOLVED, "route %r" % (e,)
    req = ctypes.create_string_buffer(data, len(data))
    assert cm.rdma_connect(i, conn_param(qp_num, req)) == 0, "connect %d" % ctypes.get_errno()
    return i, next_event(ch, 60)


def client(ip, port):
    ch, fd = channel()
    os.set_blocking(fd, False)
    bad = 0
    i, e = connect(ch, ip, port, 0x1111, REQ_DATA)
    if not e or e[1] != CONNECT_RESPONSE:
        print("no connect response: %r" % (e,))
        return 1
    bad += expect("CONNECT_RESPONSE", e[3], REP_DATA, REP_ROOM)
    assert cm.rdma_establish(i) == 0, "establish %d" % ctypes.get_errno()
    i, e = connect(ch, ip, port, 0x3333, b"again")
    if not e or e[1] != REJECTED or e[2] != REJ_CONSUMER_DEFINED:
        print("not rejected by the consumer: %r" % (e,))
        return 1
    bad += expect("REJECTED", e[3], REJ_DATA, REJ_ROOM)
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "server":
        sys.exit(server(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    sys.exit(client(sys.argv[2], int(sys.argv[3])))
