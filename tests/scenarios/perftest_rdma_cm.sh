# ib_send_bw, ib_write_bw and ib_read_bw with -R: perftest connecting through
# librdmacm (RDMA CM over rdma_ucm), 64 KiB messages, one tool after the
# other; guest a serves. The client starts only once the server's CM ID
# listens (perftest_lib.sh): one that came too early was rejected, and
# perftest's retry after a reject can crash in librdmacm (seen in the
# ucma-mixed set).
# timeout: 420
. "$RRXE_REPO/tests/scenarios/perftest_lib.sh"
perftest_cases \
	"a ib_send_bw -R -s 65536 -n 50" \
	"a ib_write_bw -R -s 65536 -n 50" \
	"a ib_read_bw -R -s 65536 -n 50"
