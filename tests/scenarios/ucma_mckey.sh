# mckey: multicast join (RoCE: IGMP-less, through the RDMA CM), datagrams to
# the group, then leave; twice, so that each guest's rdma_rxe both sends
# and receives multicast (in a mixed set, across the two drivers): first
# guest a receives what b sends, then b receives what a sends (another group).
# round RECEIVER GROUP: the receiver must count 10 messages ("test complete").
round() {
	local rcv_role=$1 group=$2 tag=$3 rc pid try
	if [ "$ROLE" = "$rcv_role" ]; then
		timeout 150 mckey -m "$group" -b "$MYIP" -C 10 >"recv$tag.out" 2>&1 &
		pid=$!
		sleep 3
		notify "ready$tag"
		wait $pid; rc=$?
		echo "--- $ROLE receives from $group"
		cat "recv$tag.out"
		notify "done$tag"
		[ $rc = 0 ] && grep -q 'test complete' "recv$tag.out"
	else
		await "ready$tag" 60 || return 1
		rc=1
		# The receiver counts 10 messages; resend until it has them.
		for try in 1 2 3 4 5; do
			timeout 60 mckey -m "$group" -b "$MYIP" -s -C 10 >"send$tag.out" 2>&1; rc=$?
			[ -e "$SYNC/$SCENARIO.done$tag.$OTHER" ] && break
			sleep 1
		done
		echo "--- $ROLE sends to $group"
		cat "send$tag.out"
		await "done$tag" 120 || return 1
		return $rc
	fi
}
round a 239.1.2.3 1; r1=$?
round b 239.1.2.4 2; r2=$?
[ $r1 = 0 ] && [ $r2 = 0 ]
