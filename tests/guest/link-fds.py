#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The guests' link as one TCP connection on 127.0.0.1 with Nagle's
algorithm off, for the benchmark (RRXE_LINK=nodelay in run-pair.sh).

    link-fds.py COMMAND [ARGS...]

Makes the connection (both ends in this process), sets TCP_NODELAY on both
ends, and runs COMMAND in its place with the ends inherited and their
numbers in RRXE_LINK_FD_A and RRXE_LINK_FD_B: QEMU's socket netdev takes
such a socket as fd=N. Over the connections QEMU 7.2 makes itself
(listen=/connect=, or the stream netdev) the host's TCP holds a frame back
while the one before it is unacknowledged, and the other host socket
delays that acknowledgement by 20-45 ms (measured: see
Documentation/guest-harness.rst, "The link").
"""
import os
import socket
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(1)
end_a = socket.create_connection(listener.getsockname())
end_b, _ = listener.accept()
listener.close()
for end in (end_a, end_b):
    end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    end.set_inheritable(True)
os.environ["RRXE_LINK_FD_A"] = str(end_a.fileno())
os.environ["RRXE_LINK_FD_B"] = str(end_b.fileno())
os.execvp(sys.argv[1], sys.argv[1:])
