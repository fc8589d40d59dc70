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
# The C module registers the IB client "rdma_cm" so that RDMA netlink names
# the device (librdmacm reads the ABI version this way first).
e, cd = get_chardev("rdma_cm")
check("netlink GET_CHARDEV rdma_cm names %s %r" % (DEV, cd),
      e == 0 and cd.get(ATTR_CHARDEV) == os.stat(DEV).st_rdev
      and cd.get(ATTR_CHARDEV_ABI) == 4 and cd.get(ATTR_CHARDEV_NAME) == "rdma_cm")

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


# WRITE_CM_EVENT: userspace queues an RDMA_CM_EVENT_USER (18) on its own
# id; GET_EVENT returns it with the id's uid, the status and the 64-bit
# argument (struct rdma_ucm_write_cm_event: id, reserved, event, status,
# then the 304-byte parameter union). Other events are refused.
def write_cm_event(fd, i, event, status, arg):
    return cmd(fd, WRITE_CM_EVENT, struct.pack("=IIIiQ", i, 0, event, status, arg) + bytes(296))


EVENT_USER = 18
check("WRITE_CM_EVENT ESTABLISHED EINVAL", write_cm_event(fd, a, 9, 0, 0) == errno.EINVAL)
check("WRITE_CM_EVENT unknown id ENOENT",
      write_cm_event(fd, 0xfffffff0, EVENT_USER, 0, 0) == errno.ENOENT)
check("WRITE_CM_EVENT", write_cm_event(fd, a, EVENT_USER, -5, 0x1122334455667788) == 0)
ev_buf = buf(336)
e = cmd(fd, GET_EVENT, struct.pack("=Q", addr(ev_buf)), 336)
check("GET_EVENT returns the user event (uid, id, event, status, argument)",
      e == 0 and struct.unpack("=QIIiQ", ev_buf.raw[:28]) == (1, a, EVENT_USER, -5, 0x1122334455667788))
e, n = destroy_id(fd, a)
check("DESTROY_ID returns 1 event", e == 0 and n == 1)
check("double DESTROY_ID ENOENT", destroy_id(fd, a)[0] == errno.ENOENT)

e, b = create_id(fd, uid=7)
# Ids come from one table of every file, the lowest free first (C's
# xa_alloc() on ctx_table): the destroyed id is the next one.
check("CREATE_ID reuses the lowest free id (%d after %d)" % (b, a), e == 0 and b == a)
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


# Options, IB-specific commands and JOIN_MCAST argument checks, each with
# the errno (and order of checks) of the C rdma_ucm of 7.3.
def set_option(fd, i, level, name, val):
    v = buf(max(len(val), 1))
    v.raw = val + bytes(len(v.raw) - len(val))
    return cmd(fd, 14, struct.pack("=QIIII", addr(v), i, level, name, len(val)))


def path_data(flags, rec=bytes(64)):
    return struct.pack("=II", flags, 0) + rec


GMP_PRIMARY_BIDI = 1 | 2 | 8 | 32
o = create_id(fd, uid=8)[1]
for name, size in (("REUSEADDR", 1), ("AFONLY", 2)):
    check("SET_OPTION %s short EINVAL" % name, set_option(fd, o, 0, size, b"\1") == errno.EINVAL)
    check("SET_OPTION %s" % name, set_option(fd, o, 0, size, struct.pack("=i", 1)) == 0)
check("SET_OPTION ACK_TIMEOUT int EINVAL", set_option(fd, o, 0, 3, struct.pack("=i", 14)) == errno.EINVAL)
check("SET_OPTION ACK_TIMEOUT", set_option(fd, o, 0, 3, b"\x0e") == 0)
check("SET_OPTION unknown level ENOSYS", set_option(fd, o, 5, 0, b"\0") == errno.ENOSYS)
check("SET_OPTION IB unknown name ENOSYS", set_option(fd, o, 1, 2, b"\0") == errno.ENOSYS)
check("SET_OPTION IB_PATH partial entry EINVAL",
      set_option(fd, o, 1, 1, path_data(GMP_PRIMARY_BIDI)[:71]) == errno.EINVAL)
check("SET_OPTION IB_PATH no primary GMP path EINVAL",
      set_option(fd, o, 1, 1, path_data(GMP_PRIMARY_BIDI | 4) + path_data(1)) == errno.EINVAL)
check("SET_OPTION IB_PATH unbound EINVAL",
      set_option(fd, o, 1, 1, path_data(GMP_PRIMARY_BIDI)) == errno.EINVAL)
ibs = struct.pack("=II", o, 0) + struct.pack("=Q", 0x1234) + bytes(64) + struct.pack("=II", 1, 0)
check("RESOLVE_IB_SERVICE unknown id ENOENT",
      cmd(fd, 23, struct.pack("=II", 0xfffffff0, 0) + ibs[8:]) == errno.ENOENT)
check("RESOLVE_IB_SERVICE unbound EINVAL", cmd(fd, 23, ibs) == errno.EINVAL)
check("QUERY unknown option ENOSYS", cmd(fd, 19, struct.pack("=QII", addr(r), o, 9), 4) == errno.ENOSYS)
qs = buf(8 + 176)
check("QUERY_IB_SERVICE small out ENOSPC",
      cmd(fd, 19, struct.pack("=QII", addr(qs), o, 3), 4) == errno.ENOSPC)
check("QUERY_IB_SERVICE none resolved ENODATA",
      cmd(fd, 19, struct.pack("=QII", addr(qs), o, 3), 8 + 176) == errno.ENODATA)


def join(fd, i, size, flags, a, out=4):
    j = buf(4)
    return cmd(fd, 22, struct.pack("=QQIHH", addr(j), 5, i, size, flags) + storage(a), out)


mcast = sin("239.1.2.3")
check("JOIN_MCAST unknown family EINVAL (before the out size)",
      join(fd, o, 16, 0, b"\x63\0" + mcast[2:], 0) == errno.EINVAL)
check("JOIN_MCAST small out ENOSPC (before size and flags)", join(fd, o, 28, 2, mcast, 0) == errno.ENOSPC)
check("JOIN_MCAST size mismatch EINVAL", join(fd, o, 28, 0, mcast) == errno.EINVAL)
check("JOIN_MCAST bad flags EINVAL", join(fd, o, 16, 2, mcast) == errno.EINVAL)
check("JOIN_MCAST unbound EINVAL", join(fd, o, 16, 0, mcast) == errno.EINVAL)
check("JOIN_MCAST unknown id ENOENT", join(fd, 0xfffffff0, 16, 1, mcast) == errno.ENOENT)
check("LEAVE_MCAST small out ENOSPC",
      cmd(fd, 17, struct.pack("=QII", addr(r), 0xfffffff0, 0), 0) == errno.ENOSPC)
check("LEAVE_MCAST unknown ENOENT",
      cmd(fd, 17, struct.pack("=QII", addr(r), 0xfffffff0, 0), 4) == errno.ENOENT)
check("bind the option ID", bind(fd, o, MYIP) == 0)


def join_id(fd, i, a):
    j = buf(4)
    e = cmd(fd, 22, struct.pack("=QQIHH", addr(j), 5, i, 16, 0) + storage(a), 4)
    return e, struct.unpack("=I", j.raw)[0]


def leave(fd, mid):
    return cmd(fd, 17, struct.pack("=QII", addr(r), mid, 0), 4)


# Memberships are numbered and checked as IDs are (C's multicast_table);
# a join needs a UD ID (RDMA_PS_UDP).
u = create_id(fd, uid=12, ps=0x0111)[1]
check("JOIN_MCAST on an RC ID EINVAL", join_id(fd, o, mcast)[0] == errno.EINVAL)
check("bind the UD ID", bind(fd, u, MYIP) == 0)
e, mid = join_id(fd, u, mcast)
check("JOIN_MCAST on the bound UD ID (%d)" % e, e == 0)
other = os.open(DEV, os.O_RDWR)
check("LEAVE_MCAST of another file's membership EINVAL", leave(other, mid) == errno.EINVAL)
os.close(other)
check("LEAVE_MCAST", leave(fd, mid) == 0)
check("LEAVE_MCAST again ENOENT", leave(fd, mid) == errno.ENOENT)
check("DESTROY_ID of the UD ID", destroy_id(fd, u)[0] == 0)
ibs = struct.pack("=II", o, 0) + ibs[8:]
check("RESOLVE_IB_SERVICE on RoCE EOPNOTSUPP", cmd(fd, 23, ibs) == errno.EOPNOTSUPP)
check("SET_OPTION IB_PATH before the address is resolved EINVAL",
      set_option(fd, o, 1, 1, path_data(GMP_PRIMARY_BIDI)) == errno.EINVAL)
check("DESTROY_ID of the option ID", destroy_id(fd, o) == (0, 0))

other = os.open(DEV, os.O_RDWR)
check("DESTROY_ID of another file's ID EINVAL", destroy_id(other, b)[0] == errno.EINVAL)
check("BIND on another file's ID EINVAL",
      cmd(other, 20, struct.pack("=IHH", b, 16, 0) + storage(sin(MYIP))) == errno.EINVAL)
os.set_blocking(other, False)
check("GET_EVENT non-blocking EAGAIN", get_event(other)[0] == errno.EAGAIN)
check("GET_EVENT small out ENOSPC",
      cmd(other, 12, struct.pack("=Q", addr(r)), 4) == errno.ENOSPC)
os.close(other)

# Bind, query, resolve address and route, with poll.
bind_b = struct.pack("=IHH", b, 16, 0) + storage(sin(MYIP))
check("BIND", cmd(fd, 20, bind_b) == 0)
q = buf(280)
check("QUERY_ADDR", cmd(fd, 19, struct.pack("=QII", addr(q), b, 0), 280) == 0)
guid, port, _, pkey, ssz, dsz = struct.unpack("=QBBHHH", q.raw[:16])
check("QUERY_ADDR bound to a device (guid %x port %d size %d)" % (guid, port, ssz),
      guid != 0 and port == 1 and ssz == 16)
ibdev_index = struct.unpack("=I", q.raw[272:276])[0]
# The client has no per-device answer (no get_nl_info), in C either.
check("netlink GET_CHARDEV rdma_cm of device %d EOPNOTSUPP" % ibdev_index,
      get_chardev("rdma_cm", ibdev_index)[0] == errno.EOPNOTSUPP)
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
qp = buf(8 + 72)
check("QUERY_PATH", cmd(fd, 19, struct.pack("=QII", addr(qp), b, 1), 8 + 72) == 0)
npaths, _, pflags = struct.unpack("=III", qp.raw[:12])
check("QUERY_PATH has the primary GMP path (%d, flags %#x)" % (npaths, pflags),
      npaths == 1 and pflags == GMP_PRIMARY_BIDI)
# That path given back with RDMA_OPTION_IB_PATH (librdmacm does so with
# ibacm's routes) resolves another ID's route, reported as an event.
x = create_id(fd, uid=31)[1]
bind(fd, x, MYIP)
resolve_addr(fd, x, PEERIP, 7475)
e, ev = get_event(fd)
check("ADDR_RESOLVED for the IB_PATH ID %r" % (ev,), e == 0 and ev[0] == 31 and ev[2] == 0)
check("SET_OPTION IB_PATH", set_option(fd, x, 1, 1, path_data(1) + qp.raw[8:80]) == 0)
e, ev = get_event(fd)
check("IB_PATH reported as ROUTE_RESOLVED %r" % (ev,), e == 0 and ev[0] == 31 and ev[2] == 2 and ev[3] == 0)
check("QUERY_ROUTE after IB_PATH has 1 path",
      cmd(fd, 5, struct.pack("=QII", addr(qr), x, 0), 208) == 0
      and struct.unpack("=I", qr.raw[192:196])[0] == 1)
check("SET_OPTION IB_PATH twice EINVAL",
      set_option(fd, x, 1, 1, qp.raw[8:80]) == errno.EINVAL)
check("DESTROY_ID of the IB_PATH ID reports 2", destroy_id(fd, x) == (0, 2))
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
check("ID gone from the old file (EINVAL: the new file's)", destroy_id(fd, m)[0] == errno.EINVAL)
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
