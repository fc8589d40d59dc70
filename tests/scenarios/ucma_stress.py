#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Several threads create, resolve, connect, listen, accept, reject, migrate
and destroy IDs on several open files of /dev/infiniband/rdma_cm at once,
and close files with IDs in every state and events pending, for a while.
The kernel log must stay clean (the harness fails the run on any KASAN,
lockdep, refcount or WARN report); the commands only have to answer.
Usage: ucma_stress.py MYIP PEERIP SECONDS"""
import errno, os, random, select, struct, sys, threading, time

from ucma_raw import *

MYIP, PEERIP, SECONDS = sys.argv[1], sys.argv[2], int(sys.argv[3])
PORT = 7480
CONNECT, ACCEPT, REJECT, DISCONNECT, MIGRATE_ID = 6, 8, 9, 10, 18
EV_ROUTE_RESOLVED, EV_CONNECT_REQUEST, EV_CONNECT_RESPONSE = 2, 4, 5

stop = time.monotonic() + SECONDS
counts = {}
lock = threading.Lock()
errors = []


def count(what):
    with lock:
        counts[what] = counts.get(what, 0) + 1


def conn_param(qp_num):
    # struct rdma_ucm_conn_param: qp_num, qkey, private_data[256], lengths,
    # resources and retries, valid.
    return struct.pack("=II", qp_num, 0) + bytes(256) + struct.pack("=8B", 0, 0, 1, 1, 0, 3, 3, 1)


def events(fd, timeout_ms):
    """The events queued on fd within timeout_ms, without blocking."""
    out = []
    p = select.poll()
    p.register(fd, select.POLLIN)
    if not p.poll(timeout_ms):
        return out
    while True:
        e, ev = get_event(fd)
        if e:
            return out
        out.append(ev)


def guard(fn):
    def run(*a):
        try:
            fn(*a)
        except Exception as e:  # a bug of the test, not of the kernel
            errors.append("%s: %r" % (fn.__name__, e))
    return run


@guard
def listener(seed):
    rnd = random.Random(seed)
    while time.monotonic() < stop:
        fd = os.open(DEV, os.O_RDWR | os.O_NONBLOCK)
        lid = create_id(fd, uid=1)[1]
        if bind(fd, lid, MYIP, PORT) or cmd(fd, LISTEN, struct.pack("=II", lid, 4)):
            os.close(fd)
            time.sleep(0.1)
            continue
        count("listen")
        until = time.monotonic() + rnd.uniform(1, 4)
        while time.monotonic() < until:
            for uid, i, ev, st in events(fd, 200):
                if ev != EV_CONNECT_REQUEST:
                    continue
                count("request")
                what = rnd.choice(("accept", "reject", "destroy", "keep"))
                if what == "accept":
                    cmd(fd, ACCEPT, struct.pack("=Q", 100 + i) + conn_param(rnd.randint(1, 1 << 20))
                        + struct.pack("=II", i, 0) + bytes(8))
                elif what == "reject":
                    cmd(fd, REJECT, struct.pack("=IBB2x", i, 0, 28) + bytes(256))
                elif what == "destroy":
                    destroy_id(fd, i)
                count(what)
        # Closed with the listener, its requests and their events pending.
        os.close(fd)


@guard
def client(seed, files):
    rnd = random.Random(seed)
    while time.monotonic() < stop:
        fd = rnd.choice(files)
        i = create_id(fd, uid=rnd.randint(1, 1 << 30))[1]
        count("create")
        steps = rnd.randint(0, 4)
        dst = rnd.choice((MYIP, PEERIP))
        ok = True
        if steps >= 1:
            ok = bind(fd, i, MYIP) == 0 and resolve_addr(fd, i, dst, PORT, 1000) == 0
        if ok and steps >= 2:
            time.sleep(rnd.uniform(0, 0.05))
            ok = cmd(fd, RESOLVE_ROUTE, struct.pack("=II", i, 1000)) in (0, errno.EINVAL)
        if ok and steps >= 3:
            time.sleep(rnd.uniform(0, 0.05))
            if cmd(fd, CONNECT, conn_param(rnd.randint(1, 1 << 20)) + struct.pack("=II", i, 0)
                   + bytes(8)) == 0:
                count("connect")
        if steps >= 4 and rnd.random() < 0.5:
            to = rnd.choice(files)
            r = buf(4)
            if cmd(to, MIGRATE_ID, struct.pack("=QII", addr(r), i, fd), 4) == 0:
                count("migrate")
                fd = to
        time.sleep(rnd.uniform(0, 0.1))
        if rnd.random() < 0.3:
            cmd(fd, DISCONNECT, struct.pack("=I", i))
        # Leave some IDs for the close of the file.
        if rnd.random() < 0.8:
            destroy_id(fd, i)
            count("destroy")


@guard
def drainer(files):
    while time.monotonic() < stop:
        for fd in list(files):
            for ev in events(fd, 10):
                count("event %d" % ev[2])
        time.sleep(0.05)


rounds = 0
while time.monotonic() < stop:
    files = [os.open(DEV, os.O_RDWR | os.O_NONBLOCK) for _ in range(3)]
    round_end = min(stop, time.monotonic() + 15)
    saved, stop = stop, round_end
    threads = [threading.Thread(target=listener, args=(rounds,))]
    threads += [threading.Thread(target=client, args=(rounds * 10 + k, files)) for k in range(3)]
    threads.append(threading.Thread(target=drainer, args=(files,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop = saved
    # Closed with whatever is left in them.
    for fd in files:
        os.close(fd)
    rounds += 1
    count("round")

print("counts: %s" % sorted(counts.items()))
check("no test error %r" % (errors,), not errors)
check("IDs were created, connected and requested",
      counts.get("create", 0) > 0 and counts.get("connect", 0) > 0 and counts.get("request", 0) > 0)
finish()
