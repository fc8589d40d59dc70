#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Device removal under ids nobody attends to: a listener and an id with an
unread event stay open on rxe0 while `rdma link delete rxe0` runs. The
module must destroy their C ids itself (the RDMA CM waits for that), so the
delete finishes; the ids then report DEVICE_REMOVAL, their commands fail
with ENXIO and DESTROY_ID counts the events. Usage: MYIP PEERIP DEV"""
import errno, os, subprocess, struct, sys, time

from ucma_raw import *

MYIP, PEERIP, IBDEV = sys.argv[1], sys.argv[2], sys.argv[3]

fd = os.open(DEV, os.O_RDWR)
e, lis = create_id(fd, uid=31)
check("CREATE_ID listener", e == 0)
check("BIND listener", bind(fd, lis, MYIP, 7480) == 0)
check("LISTEN", cmd(fd, LISTEN, struct.pack("=II", lis, 4)) == 0)
e, cli = create_id(fd, uid=32)
check("BIND client", bind(fd, cli, MYIP) == 0)
check("RESOLVE_ADDR", resolve_addr(fd, cli, PEERIP, 7481) == 0)
time.sleep(2)  # its ADDR_RESOLVED event is left unread

t0 = time.monotonic()
try:
    r = subprocess.run(["rdma", "link", "delete", IBDEV], timeout=60)
    rc = r.returncode
except subprocess.TimeoutExpired:
    rc = "timeout"
took = time.monotonic() - t0
check("rdma link delete %s with ids open: %s after %.1f s" % (IBDEV, rc, took), rc == 0)
check("%s is gone" % IBDEV, not os.path.exists("/sys/class/infiniband/" + IBDEV))

os.set_blocking(fd, False)
seen = {}
for _ in range(8):
    e, ev = get_event(fd)
    if e:
        break
    seen.setdefault(ev[1], []).append(ev[2])
print("events:", seen)
check("listener got DEVICE_REMOVAL", seen.get(lis) == [EV_DEVICE_REMOVAL])
check("client got ADDR_RESOLVED then DEVICE_REMOVAL",
      seen.get(cli) == [EV_ADDR_RESOLVED, EV_DEVICE_REMOVAL])
q = buf(280)
check("QUERY on a removed id ENXIO",
      cmd(fd, QUERY, struct.pack("=QII", addr(q), cli, 0), 280) == errno.ENXIO)
e, n = destroy_id(fd, lis)
check("DESTROY_ID listener reports 1 event (%d)" % n, e == 0 and n == 1)
e, n = destroy_id(fd, cli)
check("DESTROY_ID client reports 2 events (%d)" % n, e == 0 and n == 2)
os.close(fd)
finish()
