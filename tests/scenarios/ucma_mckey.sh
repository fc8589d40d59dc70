# mckey: multicast join (RoCE: IGMP-less, through the RDMA CM), datagrams
# from guest b to the group, then leave. Guest a receives.
group=239.1.2.3
if [ "$ROLE" = a ]; then
	timeout 150 mckey -m $group -b "$MYIP" -C 10 >recv.out 2>&1 &
	rcv=$!
	sleep 3
	notify ready
	wait $rcv; rc=$?
	cat recv.out
	notify done
	[ $rc = 0 ] && grep -q 'test complete' recv.out
else
	await ready 60 || exit 1
	rc=1
	# The receiver counts 10 messages; resend until it has them.
	for try in 1 2 3 4 5; do
		timeout 60 mckey -m $group -b "$MYIP" -s -C 10 >send.out 2>&1; rc=$?
		[ -e "$SYNC/$SCENARIO.done.a" ] && break
		sleep 1
	done
	cat send.out
	await done 120
	exit $rc
fi
