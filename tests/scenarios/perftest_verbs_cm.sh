# perftest_verbs's tools connecting through librdmacm (-R: RDMA CM over
# rdma_ucm, UD through SIDR): each bandwidth tool over RC (send, write,
# read, atomic), UD sends and the latency tools, the server alternating
# between the guests. 100 iterations of 64 KiB (64 packets at the 1024-byte
# path MTU), one MTU for UD, 2 bytes (inline) for the latency tools.
# In the rust and rust-mixed sets with RRXE_LONG=1 (Documentation/testing.rst).
# timeout: 600
. "$RRXE_REPO/tests/scenarios/perftest_lib.sh"
perftest_cases \
	"a ib_send_bw -R -s 65536 -n 100" \
	"b ib_write_bw -R -s 65536 -n 100" \
	"a ib_read_bw -R -s 65536 -n 100" \
	"b ib_atomic_bw -R -n 100" \
	"a ib_send_bw -R -c UD -s 1024 -n 100" \
	"b ib_send_lat -R -s 2 -n 100" \
	"a ib_write_lat -R -s 2 -n 100" \
	"b ib_read_lat -R -s 2 -n 100"
