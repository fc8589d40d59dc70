# udaddy: UD QPs set up through the RDMA CM (SIDR on RoCE), datagrams both
# ways (guest a listens, b connects).
args="-c 2 -C 20"
if [ "$ROLE" = a ]; then
	timeout 150 udaddy -b "$MYIP" $args >server.out 2>&1 &
	srv=$!
	sleep 1
	notify ready
	wait $srv; rc=$?
	cat server.out
	exit $rc
else
	await ready 60 || exit 1
	sleep 1
	timeout 120 udaddy -s "$PEERIP" $args >client.out 2>&1; rc=$?
	cat client.out
	[ $rc = 0 ] && grep -q 'test complete' client.out
fi
