# The IB CM with the peer gone: guest b drops every frame it sends (netem
# loss 100%; guest a has a permanent neighbour entry for b, made from a
# ping's, so that address resolution needs no answer from b: a dynamic
# entry goes stale within 15-45 s and its probe then fails address
# resolution with ADDR_ERROR -110 before any REQ is sent), so guest a's
# REQs go unanswered. The CM retries them (the RDMA CM asks for 15
# retries of about 4.3 s each) and then reports the connection UNREACHABLE
# with -ETIMEDOUT, as the C ib_cm does; nothing hangs.
# timeout: 200
set -u
fail() { echo "FAIL: $*"; exit 1; }

if [ "$ROLE" = b ]; then
	timeout 60 rping -s -a "$MYIP" -C 1 >server.out 2>&1 &
	await pinged 60 || exit 1
	tc qdisc add dev eth0 root netem loss 100% || fail "cannot add netem"
	notify down
	await done 190
	rc=$?
	tc -s qdisc show dev eth0
	tc qdisc del dev eth0 root
	exit $rc
fi
ping -c 1 -W 5 "$PEERIP" || fail "no ping to the peer"
lladdr=$(ip neigh show "$PEERIP" dev eth0 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
ip neigh replace "$PEERIP" dev eth0 lladdr "$lladdr" nud permanent ||
	fail "no permanent neighbour entry for $PEERIP (lladdr '$lladdr')"
ip neigh show "$PEERIP" dev eth0
notify pinged
await down 60 || exit 1
start=$(date +%s)
timeout 180 rping -c -a "$PEERIP" -C 1 -v >connect.out 2>&1
rc=$?
end=$(date +%s)
notify done
ip neigh del "$PEERIP" dev eth0
cat connect.out
echo "rping exit status $rc after $((end - start)) s"
[ $rc != 124 ] || fail "the connection attempt hung"
grep -q 'RDMA_CM_EVENT_UNREACHABLE, error -110$' connect.out ||
	fail "no UNREACHABLE with -ETIMEDOUT"
