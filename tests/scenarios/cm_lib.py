# SPDX-License-Identifier: GPL-2.0
"""librdmacm through ctypes, what the CM scenarios (cm_mra.py, cm_stale.py)
share: the functions they call, the event names, and the event loop.
The scenarios import it from their own directory (tests/scenarios/), which
Python puts first on sys.path for a script."""
import ctypes, os, socket, struct, sys, time

cm = ctypes.CDLL("librdmacm.so.1", use_errno=True)
cm.rdma_create_event_channel.restype = ctypes.c_void_p
V = ctypes.c_void_p
for _f, _args in (("rdma_create_id", [V, ctypes.POINTER(V), V, ctypes.c_int]),
                  ("rdma_bind_addr", [V, ctypes.c_char_p]), ("rdma_listen", [V, ctypes.c_int]),
                  ("rdma_resolve_addr", [V, V, ctypes.c_char_p, ctypes.c_int]),
                  ("rdma_resolve_route", [V, ctypes.c_int]), ("rdma_connect", [V, ctypes.c_char_p]),
                  ("rdma_accept", [V, ctypes.c_char_p]), ("rdma_establish", [V]),
                  ("rdma_disconnect", [V]),
                  ("rdma_create_qp", [V, V, ctypes.c_char_p]), ("rdma_destroy_qp", [V]),
                  ("rdma_destroy_id", [V]),
                  ("rdma_get_cm_event", [V, ctypes.POINTER(V)]), ("rdma_ack_cm_event", [V])):
    getattr(cm, _f).restype = None if _f == "rdma_destroy_qp" else ctypes.c_int
    getattr(cm, _f).argtypes = _args
PS_TCP = 0x0106
EV = {0: "ADDR_RESOLVED", 2: "ROUTE_RESOLVED", 4: "CONNECT_REQUEST", 5: "CONNECT_RESPONSE",
      6: "CONNECT_ERROR", 7: "UNREACHABLE", 8: "REJECTED", 9: "ESTABLISHED", 10: "DISCONNECTED",
      15: "TIMEWAIT_EXIT"}
CONNECT_REQUEST, CONNECT_RESPONSE, REJECTED, ESTABLISHED, DISCONNECTED = 4, 5, 8, 9, 10
# When set (time.time() at the start), events are printed with the seconds since.
T0 = None


def sin(ip, port):
    return struct.pack("=H", socket.AF_INET) + struct.pack(">H", port) + socket.inet_aton(ip) + bytes(8)


def conn_param(qpn=0, depth=0):
    # struct rdma_conn_param: no private data, `depth` reads in flight each
    # way, 7 retries, 7 RNR retries, no SRQ; `qpn` 0 is the ID's QP's.
    return struct.pack("=QBBBBBBBxI", 0, 0, depth, depth, 0, 7, 7, 0, qpn)


def get_event(ch, seconds):
    """The next (id, event, status), or None after `seconds`."""
    fd = ctypes.c_int.from_address(ch).value
    os.set_blocking(fd, False)
    end = time.time() + seconds
    ev = V()
    while cm.rdma_get_cm_event(ch, ctypes.byref(ev)):
        if time.time() > end:
            return None
        time.sleep(0.05)
    idp, _, kind, status = struct.unpack("=QQIi", ctypes.string_at(ev.value, 24))
    cm.rdma_ack_cm_event(ev)
    stamp = "" if T0 is None else "%.2f " % (time.time() - T0)
    print("%s%s event %s status %d" % (stamp, sys.argv[1], EV.get(kind, kind), status), flush=True)
    return idp, kind, status


def new_id(ch):
    i = V()
    assert cm.rdma_create_id(ch, ctypes.byref(i), None, PS_TCP) == 0
    return i
