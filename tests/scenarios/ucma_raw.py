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
WRITE_CM_EVENT = 24
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


# RDMA netlink (uapi rdma_netlink.h): RDMA_NLDEV_CMD_GET_CHARDEV.
NETLINK_RDMA = 20
NLDEV_CMD_GET_CHARDEV = (5 << 10) + 15  # RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, 15)
ATTR_DEV_INDEX, ATTR_CHARDEV_TYPE = 1, 69
ATTR_CHARDEV_NAME, ATTR_CHARDEV_ABI, ATTR_CHARDEV = 70, 71, 72


def nl_attr(kind, payload):
    a = struct.pack("=HH", 4 + len(payload), kind) + payload
    return a + bytes(-len(a) % 4)


def get_chardev(client, dev_index=None):
    """Asks RDMA netlink which char device serves `client`; returns
    (errno, {CHARDEV: dev_t, CHARDEV_ABI: int, CHARDEV_NAME: str})."""
    body = nl_attr(ATTR_CHARDEV_TYPE, client.encode() + b"\0")
    if dev_index is not None:
        body += nl_attr(ATTR_DEV_INDEX, struct.pack("=I", dev_index))
    # NLM_F_REQUEST | NLM_F_ACK
    msg = struct.pack("=IHHII", 16 + len(body), NLDEV_CMD_GET_CHARDEV, 1 | 4, 1, 0) + body
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    try:
        s.settimeout(5)
        s.send(msg)
        res = {}
        while True:
            data = s.recv(65536)
            off = 0
            while off + 16 <= len(data):
                ln, typ, _, _, _ = struct.unpack_from("=IHHII", data, off)
                if typ == 2:  # NLMSG_ERROR: 0 is the ack
                    return -struct.unpack_from("=i", data, off + 16)[0], res
                a = off + 16
                while a + 4 <= off + ln:
                    alen, kind = struct.unpack_from("=HH", data, a)
                    val = data[a + 4:a + alen]
                    if kind in (ATTR_CHARDEV, ATTR_CHARDEV_ABI):
                        res[kind] = struct.unpack("=Q", val[:8])[0]
                    elif kind == ATTR_CHARDEV_NAME:
                        res[kind] = val.rstrip(b"\0").decode()
                    a += (alen + 3) & ~3
                off += (ln + 3) & ~3
    finally:
        s.close()
