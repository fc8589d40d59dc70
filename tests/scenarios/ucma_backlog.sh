# Backlog overflow: a listener with backlog 2 (guest a) that reads no event,
# 10 connects from guest b: 8 must be REJECTED promptly (the C rdma_ucm
# drops them silently instead, and the clients retry until they time out).
[ "$MYSET" = ucma ] || [ "$MYSET" = rust ] || [ "$MYSET" = full ] || [ "$ROLE" = b ] || exit $KSFT_SKIP
port=20079
py="$RRXE_REPO/tests/scenarios/ucma_backlog.py"
if [ "$ROLE" = a ]; then
	serve "$SYNC/$SCENARIO.clientdone" python3 "$py" server "$MYIP" $port "$SYNC/$SCENARIO.clientdone"
	await done 200
	: >"$SYNC/$SCENARIO.clientdone"
	wait $SERVER
else
	[ "$PEERSET" = ucma ] || [ "$PEERSET" = rust ] || [ "$PEERSET" = full ] || { await ready 60; notify done; exit $KSFT_SKIP; }
	await ready 60 || exit 1
	python3 "$py" client "$PEERIP" $port 10; rc=$?
	notify done
	exit $rc
fi
