#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Drives /dev/infiniband/rdma_cm directly: errnos of bad input, the ABI
version attribute, address/route resolution events, poll, release with
IDs in every state. Usage: ucma_abi.py MYIP PEERIP"""
import errno, os, select, struct, sys

from ucma_raw import *

MYIP, PEERIP = sys.argv[1], sys.argv[2]


with open("/sys/class/misc/rdma_cm/abi_version") as f:
    check("abi_version is 4", f.read().strip() == "4")

fd = os.open(DEV, os.O_RDWR)
try:
    os.write(fd, b"\0" * 4)
    check("short write EINVAL", False)
except OSError as e:
    check("short write EINVAL", e.errno == errno.EINVAL)
check("unknown command EINVAL", cmd(fd, 99, b"") == errno.EINVAL)
try:
    os.write(fd, struct.pack("=IHH", 0, 100, 4))
    check("in beyond write EINVAL", False)
except OSError as e:
    check("in beyond write EINVAL", e.errno == errno.EINVAL)
check("GET_OPTION ENOSYS", cmd(fd, 13, bytes(24)) == errno.ENOSYS)
r = buf(4)
check("CREATE_ID small out ENOSPC",
      cmd(fd, 0, struct.pack("=QQHB5x", 1, addr(r), 0x0106, 0), 0) == errno.ENOSPC)
check("CREATE_ID bad ps EINVAL", create_id(fd, ps=0x1234)[0] == errno.EINVAL)
e, a = create_id(fd)
check("CREATE_ID", e == 0)
check("DESTROY_ID unknown ENOENT", destroy_id(fd, 0xfffffff0)[0] == errno.ENOENT)
e, n = destroy_id(fd, a)
check("DESTROY_ID returns 0 events", e == 0 and n == 0)
check("double DESTROY_ID ENOENT", destroy_id(fd, a)[0] == errno.ENOENT)

e, b = create_id(fd, uid=7)
check("RESOLVE_ROUTE unbound EINVAL", cmd(fd, 4, struct.pack("=II", b, 1000)) == errno.EINVAL)
check("BIND_IP bad family EINVAL",
      cmd(fd, 2, struct.pack("=Q", 0) + struct.pack("=H", 99) + bytes(26) + struct.pack("=I", b))
      == errno.EINVAL)
check("SET_OPTION TOS bad len EINVAL",
      cmd(fd, 14, struct.pack("=QIIII", addr(r), b, 0, 0, 2)) == errno.EINVAL)
check("SET_OPTION unknown ENOSYS",
      cmd(fd, 14, struct.pack("=QIIII", addr(r), b, 0, 77, 1)) == errno.ENOSYS)
tos = buf(1)
check("SET_OPTION TOS", cmd(fd, 14, struct.pack("=QIIII", addr(tos), b, 0, 0, 1)) == 0)

other = os.open(DEV, os.O_RDWR)
check("ID of another file refused",
      destroy_id(other, b)[0] in (errno.EINVAL, errno.ENOENT))
os.set_blocking(other, False)
check("GET_EVENT non-blocking EAGAIN", get_event(other)[0] == errno.EAGAIN)
check("GET_EVENT small out ENOSPC",
      cmd(other, 12, struct.pack("=Q", addr(r)), 4) == errno.ENOSPC)
os.close(other)

# Bind, query, resolve address and route, with poll.
bind = struct.pack("=IHH", b, 16, 0) + storage(sin(MYIP))
check("BIND", cmd(fd, 20, bind) == 0)
q = buf(280)
check("QUERY_ADDR", cmd(fd, 19, struct.pack("=QII", addr(q), b, 0), 280) == 0)
guid, port, _, pkey, ssz, dsz = struct.unpack("=QBBHHH", q.raw[:16])
check("QUERY_ADDR bound to a device (guid %x port %d size %d)" % (guid, port, ssz),
      guid != 0 and port == 1 and ssz == 16)
res = struct.pack("=IIHHI", b, 2000, 0, 16, 0) + storage(b"") + storage(sin(PEERIP, 7471))
check("RESOLVE_ADDR", cmd(fd, 21, res) == 0)
p = select.poll()
p.register(fd, select.POLLIN)
check("poll reports the event", any(ev & select.POLLIN for _, ev in p.poll(5000)))
e, ev = get_event(fd)
check("ADDR_RESOLVED event %r" % (ev,), e == 0 and ev[0] == 7 and ev[1] == b and ev[2] == 0 and ev[3] == 0)
check("RESOLVE_ROUTE", cmd(fd, 4, struct.pack("=II", b, 2000)) == 0)
e, ev = get_event(fd)
check("ROUTE_RESOLVED event %r" % (ev,), e == 0 and ev[2] == 2 and ev[3] == 0)
qr = buf(208)
check("QUERY_ROUTE", cmd(fd, 5, struct.pack("=QII", addr(qr), b, 0), 208) == 0)
num = struct.unpack("=I", qr.raw[192:196])[0]
check("QUERY_ROUTE has a path (%d)" % num, num >= 1)
qa = buf(144)
check("INIT_QP_ATTR bad state EINVAL",
      cmd(fd, 11, struct.pack("=QII", addr(qa), b, 7), 144) == errno.EINVAL)
check("INIT_QP_ATTR INIT", cmd(fd, 11, struct.pack("=QII", addr(qa), b, 1), 144) == 0)
e, n = destroy_id(fd, b)
check("DESTROY_ID after 2 events reports 2", e == 0 and n == 2)

# MIGRATE_ID: an ID with a pending event moves to another file.
f2 = os.open(DEV, os.O_RDWR)
m = create_id(fd, uid=21)[1]
cmd(fd, 20, struct.pack("=IHH", m, 16, 0) + storage(sin(MYIP)))
cmd(fd, 21, struct.pack("=IIHHI", m, 2000, 0, 16, 0) + storage(b"") + storage(sin(PEERIP, 7474)))
p.poll(5000)
mr = buf(4)
check("MIGRATE_ID bad fd ENOENT",
      cmd(f2, 18, struct.pack("=QII", addr(mr), m, 9999), 4) == errno.ENOENT)
null = os.open("/dev/null", os.O_RDWR)
check("MIGRATE_ID non-rdma_cm fd EINVAL",
      cmd(f2, 18, struct.pack("=QII", addr(mr), m, null), 4) == errno.EINVAL)
os.close(null)
check("MIGRATE_ID", cmd(f2, 18, struct.pack("=QII", addr(mr), m, fd), 4) == 0
      and struct.unpack("=I", mr.raw)[0] == 0)
e, ev = get_event(f2)
check("event followed the ID %r" % (ev,), e == 0 and ev[0] == 21 and ev[2] == 0)
check("ID gone from the old file", destroy_id(fd, m)[0] in (errno.ENOENT, errno.EINVAL))
e, n = destroy_id(f2, m)
check("DESTROY_ID on the new file reports 1", e == 0 and n == 1)
os.close(f2)

# Release with IDs in several states and events pending.
c1 = create_id(fd, uid=9)[1]
c2 = create_id(fd, uid=10)[1]
cmd(fd, 20, struct.pack("=IHH", c2, 16, 0) + storage(sin(MYIP)))
cmd(fd, 21, struct.pack("=IIHHI", c2, 2000, 0, 16, 0) + storage(b"") + storage(sin(PEERIP, 7472)))
c3 = create_id(fd, uid=11)[1]
cmd(fd, 20, struct.pack("=IHH", c3, 16, 0) + storage(sin(MYIP, 7473)))
check("LISTEN", cmd(fd, 7, struct.pack("=II", c3, 4)) == 0)
p.poll(3000)
os.close(fd)
check("release with pending IDs and events", True)
finish()
