# The IB CM under faults, between the guests.
# 1. Rejects: each guest connects to the other on a port nobody listens on;
#    the peer's CM answers the REQ with a REJ, reason 8
#    (IB_CM_REJ_INVALID_SERVICE_ID, as the C ib_cm's cm_req_handler does),
#    which the RDMA CM reports as REJECTED with that status.
# 2. Loss: with netem dropping 20% of guest b's outgoing frames (REPs, REJs,
#    RTUs, DREPs and data), several connections still establish through the
#    CM's MAD retries, move their messages and disconnect.
# timeout: 300
set -u
fail() { echo "FAIL: $*"; exit 1; }

barrier reject-ready 60 || exit 1
timeout 60 rping -c -a "$PEERIP" -p 7174 -C 1 -v >reject.out 2>&1
rc=$?
cat reject.out
[ $rc != 124 ] || fail "rping to a port with no listener hung"
grep -q 'RDMA_CM_EVENT_REJECTED, error 8$' reject.out ||
	fail "no REJECTED with reason 8 (invalid service ID)"
barrier rejected 90 || exit 1

if [ "$ROLE" = b ]; then
	tc qdisc add dev eth0 root netem loss 20% || fail "cannot add netem"
	trap 'tc qdisc del dev eth0 root' EXIT
fi
barrier lossy 60 || exit 1
librdmacm_example ucmatose -c 4 -C 10 -S 1024
rc=$?
[ "$ROLE" = b ] && tc -s qdisc show dev eth0
exit $rc
