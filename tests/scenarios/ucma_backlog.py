#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Listener backlog overflow through librdmacm (ctypes).
server MYIP PORT SYNCFILE: listen with backlog 2, read no event until
SYNCFILE exists, then count the connection requests (expects 2).
client PEERIP PORT N: N connects at once; all but 2 must be REJECTED
promptly (this module rejects beyond the backlog; the C one stays silent)."""
import ctypes, os, sys, time

from rdmacm import *


def server(ip, port, sync):
    ch, fd, _ = listen(ip, port, 2, sync)
    t = time.time() + 200
    while not os.path.exists(sync) and time.time() < t:
        time.sleep(0.2)
    os.set_blocking(fd, False)
    reqs = 0
    while True:
        e = get_event(ch)
        if e is None:
            break
        print("server event", EV.get(e[1], e[1]), e[2])
        if e[1] == CONNECT_REQUEST:
            reqs += 1
    print("connection requests queued:", reqs)
    return 0 if reqs == 2 else 1


def client(ip, port, n):
    ch, fd = channel()
    ids = []
    for _ in range(n):
        i = new_id(ch)
        assert cm.rdma_resolve_addr(i, None, sin(ip, port), 2000) == 0
        e = get_event(ch)
        assert e and e[1] == ADDR_RESOLVED, "addr %r" % (e,)
        assert cm.rdma_resolve_route(i, 2000) == 0
        e = get_event(ch)
        assert e and e[1] == ROUTE_RESOLVED, "route %r" % (e,)
        ids.append(i)
    start = time.time()
    for k, i in enumerate(ids):
        # Distinct QPNs: the peer's CM rejects a repeated one as stale.
        assert cm.rdma_connect(i, conn_param(0x1000 + k)) == 0, "connect %d" % ctypes.get_errno()
    os.set_blocking(fd, False)
    rejected = 0
    deadline = start + 20
    while time.time() < deadline and rejected < n - 2:
        e = get_event(ch)
        if e is None:
            time.sleep(0.05)
            continue
        print("client event %s status %d after %.2fs" % (EV.get(e[1], e[1]), e[2], time.time() - start))
        # Rejected by the listener's module, reason consumer defined (28).
        if e[1] == REJECTED and e[2] == REJ_CONSUMER_DEFINED:
            rejected += 1
    took = time.time() - start
    print("rejected %d of %d in %.2fs" % (rejected, n, took))
    return 0 if rejected == n - 2 else 1


if __name__ == "__main__":
    if sys.argv[1] == "server":
        sys.exit(server(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    sys.exit(client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
