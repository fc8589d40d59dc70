# The MAD layer's GSI QP (QP1) on rxe0: created with its CQ, moved to RTS
# and given its receive buffers (the MAD layer drops the port otherwise),
# as `rdma resource show qp` reports it (restrack queries the QP through the
# driver's query_qp). Needs link_add's rxe0.
# timeout: 120
set -e
fail() { echo "FAIL: $*"; exit 1; }
[ -e /sys/class/infiniband/rxe0 ] || fail "no rxe0 (run link_add first)"
qp1() { rdma resource show qp link rxe0/1 2>&1 | grep -w 'lqpn 1' || true; }
line=
for i in $(seq 50); do
	line=$(qp1)
	[ -n "$line" ] && break
	sleep 0.2
done
rdma resource show qp
[ -n "$line" ] || fail "rxe0 has no QP 1"
echo "$line" | grep -qw 'type GSI' || fail "QP 1 is not GSI: $line"
echo "$line" | grep -qw 'state RTS' || fail "QP 1 is not in RTS: $line"
