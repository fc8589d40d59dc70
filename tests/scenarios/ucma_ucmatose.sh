# ucmatose: several RC connections through the RDMA CM (guest a listens,
# b connects), messages both ways, then disconnect.
args="-c 4 -C 20 -S 1024"
if [ "$ROLE" = a ]; then
	timeout 150 ucmatose -b "$MYIP" $args >server.out 2>&1 &
	srv=$!
	sleep 1
	notify ready
	wait $srv; rc=$?
	cat server.out
	exit $rc
else
	await ready 60 || exit 1
	sleep 1
	timeout 120 ucmatose -s "$PEERIP" $args >client.out 2>&1; rc=$?
	cat client.out
	[ $rc = 0 ] && grep -q 'test complete' client.out
fi
