#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Listener backlog overflow through librdmacm (ctypes).
server MYIP PORT SYNCFILE: listen with backlog 2, read no event until
SYNCFILE exists, then count the connection requests (expects 2).
client PEERIP PORT N: N connects at once; all but 2 must be REJECTED
promptly (this module rejects beyond the backlog; the C one stays silent)."""
import ctypes, os, socket, struct, sys, time

cm = ctypes.CDLL("librdmacm.so.1", use_errno=True)
cm.rdma_create_event_channel.restype = ctypes.c_void_p
for f in ("rdma_create_id", "rdma_bind_addr", "rdma_listen", "rdma_resolve_addr",
          "rdma_resolve_route", "rdma_connect", "rdma_get_cm_event",
          "rdma_ack_cm_event", "rdma_destroy_id"):
    getattr(cm, f).restype = ctypes.c_int
cm.rdma_create_id.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int]
cm.rdma_bind_addr.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
cm.rdma_listen.argtypes = [ctypes.c_void_p, ctypes.c_int]
cm.rdma_resolve_addr.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
cm.rdma_resolve_route.argtypes = [ctypes.c_void_p, ctypes.c_int]
cm.rdma_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
cm.rdma_get_cm_event.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
cm.rdma_ack_cm_event.argtypes = [ctypes.c_void_p]
cm.rdma_destroy_id.argtypes = [ctypes.c_void_p]
PS_TCP = 0x0106
EV = {0: "ADDR_RESOLVED", 2: "ROUTE_RESOLVED", 4: "CONNECT_REQUEST", 6: "CONNECT_ERROR",
      7: "UNREACHABLE", 8: "REJECTED", 9: "ESTABLISHED"}


def sin(ip, port):
    return struct.pack("=H", socket.AF_INET) + struct.pack(">H", port) + socket.inet_aton(ip) + bytes(8)


def channel():
    ch = cm.rdma_create_event_channel()
    assert ch, "no event channel"
    fd = ctypes.c_int.from_address(ch).value
    return ch, fd


def get_event(ch):
    ev = ctypes.c_void_p()
    if cm.rdma_get_cm_event(ch, ctypes.byref(ev)):
        return None
    idp, _, kind, status = struct.unpack("=QQIi", ctypes.string_at(ev.value, 24))
    cm.rdma_ack_cm_event(ev)
    return idp, kind, status


def new_id(ch):
    i = ctypes.c_void_p()
    assert cm.rdma_create_id(ch, ctypes.byref(i), None, PS_TCP) == 0
    return i


def server(ip, port, sync):
    ch, fd = channel()
    lid = new_id(ch)
    assert cm.rdma_bind_addr(lid, sin(ip, port)) == 0, "bind"
    assert cm.rdma_listen(lid, 2) == 0, "listen"
    open(sync + ".listening", "w").close()
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
        if e[1] == 4:
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
        assert e and e[1] == 0, "addr %r" % (e,)
        assert cm.rdma_resolve_route(i, 2000) == 0
        e = get_event(ch)
        assert e and e[1] == 2, "route %r" % (e,)
        ids.append(i)
    start = time.time()
    for k, i in enumerate(ids):
        # Distinct QPNs: the peer's CM rejects a repeated one as stale.
        param = struct.pack("=QBBBBBBBxI", 0, 0, 0, 0, 0, 7, 7, 0, 0x1000 + k)
        assert cm.rdma_connect(i, param) == 0, "connect %d" % ctypes.get_errno()
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
        if e[1] == 8 and e[2] == 28:
            rejected += 1
    took = time.time() - start
    print("rejected %d of %d in %.2fs" % (rejected, n, took))
    return 0 if rejected == n - 2 else 1


if __name__ == "__main__":
    if sys.argv[1] == "server":
        sys.exit(server(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    sys.exit(client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
