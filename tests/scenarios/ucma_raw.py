# SPDX-License-Identifier: GPL-2.0
"""The rdma_cm ABI written by hand (no librdmacm), for the scenarios that
need what librdmacm does not offer: bad input, ids left unattended. Each
command returns 0 or the errno of its write()."""
import ctypes, os, socket, struct, sys

DEV = "/dev/infiniband/rdma_cm"
fails = 0

# Commands (enum of rdma_user_cm.h).
CREATE_ID, DESTROY_ID, BIND_IP, RESOLVE_IP, RESOLVE_ROUTE, QUERY_ROUTE = 0, 1, 2, 3, 4, 5
LISTEN, INIT_QP_ATTR, GET_EVENT, QUERY, BIND, RESOLVE_ADDR = 7, 11, 12, 19, 20, 21
# Events.
EV_ADDR_RESOLVED, EV_DEVICE_REMOVAL = 0, 11


def check(what, cond):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def finish():
    print("%d failure(s)" % fails)
    sys.exit(1 if fails else 0)


def buf(n):
    return ctypes.create_string_buffer(n)


def addr(b):
    return ctypes.addressof(b)


def cmd(fd, num, body, out=0):
    """Writes a command; returns 0 or the errno."""
    data = struct.pack("=IHH", num, len(body), out) + body
    try:
        n = os.write(fd, data)
        return 0 if n == len(data) else -1
    except OSError as e:
        return e.errno


def create_id(fd, uid=1, ps=0x0106):
    r = buf(4)
    e = cmd(fd, CREATE_ID, struct.pack("=QQHB5x", uid, addr(r), ps, 0), 4)
    return e, struct.unpack("=I", r.raw)[0]


def destroy_id(fd, i):
    """Returns (errno, events reported)."""
    r = buf(4)
    e = cmd(fd, DESTROY_ID, struct.pack("=QII", addr(r), i, 0), 4)
    return e, struct.unpack("=I", r.raw)[0]


def sin(ip, port=0):
    return struct.pack("=H", socket.AF_INET) + struct.pack(">H", port) + socket.inet_aton(ip) + bytes(8)


def storage(a):
    return a + bytes(128 - len(a))


def bind(fd, i, ip, port=0):
    return cmd(fd, BIND, struct.pack("=IHH", i, 16, 0) + storage(sin(ip, port)))


def resolve_addr(fd, i, dst, port, timeout_ms=2000):
    return cmd(fd, RESOLVE_ADDR,
               struct.pack("=IIHHI", i, timeout_ms, 0, 16, 0) + storage(b"") + storage(sin(dst, port)))


def get_event(fd):
    """Returns (errno, (uid, id, event, status))."""
    r = buf(336)
    e = cmd(fd, GET_EVENT, struct.pack("=Q", addr(r)), 336)
    if e:
        return e, None
    uid, i, ev, st = struct.unpack("=QIIi", r.raw[:20])
    return 0, (uid, i, ev, st)
