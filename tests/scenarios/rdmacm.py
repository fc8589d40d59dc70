# SPDX-License-Identifier: GPL-2.0
"""librdmacm through ctypes, for the scenarios that drive it without a QP:
the calls they use, the event they read and the addresses they pass."""
import ctypes, socket, struct

cm = ctypes.CDLL("librdmacm.so.1", use_errno=True)
cm.rdma_create_event_channel.restype = ctypes.c_void_p
for f in ("rdma_create_id", "rdma_bind_addr", "rdma_listen", "rdma_resolve_addr",
          "rdma_resolve_route", "rdma_connect", "rdma_accept", "rdma_reject",
          "rdma_establish", "rdma_get_cm_event", "rdma_ack_cm_event", "rdma_destroy_id"):
    getattr(cm, f).restype = ctypes.c_int
cm.rdma_create_id.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int]
cm.rdma_bind_addr.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
cm.rdma_listen.argtypes = [ctypes.c_void_p, ctypes.c_int]
cm.rdma_resolve_addr.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
cm.rdma_resolve_route.argtypes = [ctypes.c_void_p, ctypes.c_int]
cm.rdma_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
cm.rdma_accept.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
cm.rdma_reject.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint8]
cm.rdma_establish.argtypes = [ctypes.c_void_p]
cm.rdma_get_cm_event.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
cm.rdma_ack_cm_event.argtypes = [ctypes.c_void_p]
cm.rdma_destroy_id.argtypes = [ctypes.c_void_p]
PS_TCP = 0x0106
ADDR_RESOLVED, ROUTE_RESOLVED, CONNECT_REQUEST, CONNECT_RESPONSE = 0, 2, 4, 5
CONNECT_ERROR, UNREACHABLE, REJECTED, ESTABLISHED = 6, 7, 8, 9
# The reject reason of a consumer's own reject (IB_CM_REJ_CONSUMER_DEFINED).
REJ_CONSUMER_DEFINED = 28
EV = {ADDR_RESOLVED: "ADDR_RESOLVED", ROUTE_RESOLVED: "ROUTE_RESOLVED",
      CONNECT_REQUEST: "CONNECT_REQUEST", CONNECT_RESPONSE: "CONNECT_RESPONSE",
      CONNECT_ERROR: "CONNECT_ERROR", UNREACHABLE: "UNREACHABLE", REJECTED: "REJECTED",
      ESTABLISHED: "ESTABLISHED"}


def sin(ip, port):
    return struct.pack("=H", socket.AF_INET) + struct.pack(">H", port) + socket.inet_aton(ip) + bytes(8)


def channel():
    ch = cm.rdma_create_event_channel()
    assert ch, "no event channel"
    fd = ctypes.c_int.from_address(ch).value
    return ch, fd


def get_event(ch, private=False):
    """(id, event, status) of the next event, or None (no event, when the
    channel does not block); with private, also the event's private data
    (struct rdma_conn_param: its pointer and length), as the event gave it."""
    ev = ctypes.c_void_p()
    if cm.rdma_get_cm_event(ch, ctypes.byref(ev)):
        return None
    idp, _, kind, status, data, n = struct.unpack("=QQIiQB", ctypes.string_at(ev.value, 33))
    out = (idp, kind, status)
    if private:
        out += (ctypes.string_at(data, n) if data else b"",)
    cm.rdma_ack_cm_event(ev)
    return out


def new_id(ch):
    i = ctypes.c_void_p()
    assert cm.rdma_create_id(ch, ctypes.byref(i), None, PS_TCP) == 0
    return i


def conn_param(qp_num, data=None):
    """struct rdma_conn_param without a QP: `data` (a ctypes buffer, kept
    alive by the caller) as the private data, responder resources and
    initiator depth 0, retries 7, qp_num."""
    ptr, n = (ctypes.addressof(data), len(data.raw)) if data is not None else (0, 0)
    return struct.pack("=QBBBBBBBxI", ptr, n, 0, 0, 0, 7, 7, 0, qp_num)


def listen(ip, port, backlog, sync):
    """A channel and an id listening on ip:port; SYNC.listening is created
    once it listens (the scenario's shell waits for it: tests/guest/lib.sh
    serve)."""
    ch, fd = channel()
    lid = new_id(ch)
    assert cm.rdma_bind_addr(lid, sin(ip, port)) == 0, "bind"
    assert cm.rdma_listen(lid, backlog) == 0, "listen"
    open(sync + ".listening", "w").close()
    return ch, fd, lid
