# perftest over RC (and UD for sends) between the guests, connected through
# perftest's TCP exchange on the IPv4 RoCE v2 GID: every bandwidth tool
# (send, write, read, atomic) with each guest as the server once, so that in
# a mixed set each driver is requester and responder, UD sends and the
# latency tools (ping-pong send and write with inline data, read) once.
# 100 iterations of 64 KiB (64 packets at the 1024-byte path MTU), 10 of
# 1 MiB for one write, 2 bytes (inline) or 4 KiB for the latency tools, one
# MTU for UD. Each case is one line of the log with its wall-clock time
# (perftest prints 0.00 MB/s: a test guest has no calibrated TSC).
# In the rust and rust-mixed sets with RRXE_LONG=1 (Documentation/testing.rst).
# timeout: 600
. "$RRXE_REPO/tests/scenarios/perftest_lib.sh"
perftest_cases \
	"a ib_send_bw -s 65536 -n 100" \
	"b ib_send_bw -s 65536 -n 100" \
	"a ib_write_bw -s 65536 -n 100" \
	"b ib_write_bw -s 1048576 -n 10" \
	"a ib_read_bw -s 65536 -n 100" \
	"b ib_read_bw -s 65536 -n 100" \
	"a ib_atomic_bw -A CMP_AND_SWAP -n 100" \
	"b ib_atomic_bw -n 100" \
	"a ib_send_bw -c UD -s 1024 -n 100" \
	"b ib_send_lat -s 2 -n 100" \
	"a ib_write_lat -s 2 -n 100" \
	"b ib_read_lat -s 4096 -n 100"
