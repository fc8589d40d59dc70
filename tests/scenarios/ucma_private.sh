# Private data of connection events (tests/scenarios/ucma_private.py): the
# client's in the request (guest a serves), the server's in the connect
# response, the reject's in REJECTED, each its CM message's room long.
# Any rdma_ucm: the C one answers the same.
port=20081
py="$RRXE_REPO/tests/scenarios/ucma_private.py"
if [ "$ROLE" = a ]; then
	serve "$SYNC/$SCENARIO.srv" python3 "$py" server "$MYIP" $port "$SYNC/$SCENARIO.srv"
	wait $SERVER; rc=$?
	notify done
	exit $rc
else
	await ready 60 || exit 1
	python3 "$py" client "$PEERIP" $port; rc=$?
	await done 120
	exit $rc
fi
