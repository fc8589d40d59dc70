# Stale connections: guest b connects to a listener of guest a with QPN
# 0x1234 and establishes; a second connect from the same QPN must be
# REJECTED with reason 10 (IB_CM_REJ_STALE_CONN) by guest a's CM, which
# disconnects the first connection (a DREQ: both ends see DISCONNECTED).
# Guest a's IB CM is the one checked; the QPs are only numbers the CMs
# carry (tests/scenarios/cm_stale.py).
# timeout: 240
port=20091
py="$RRXE_REPO/tests/scenarios/cm_stale.py"
if [ "$ROLE" = a ]; then
	python3 "$py" server "$MYIP" $port >server.out 2>&1 &
	srv=$!
	for _ in $(seq 100); do grep -q listening server.out && break; sleep 0.2; done
	notify ready
	wait $srv
	rc=$?
	cat server.out
	exit $rc
fi
await ready 60 || exit 1
timeout 150 python3 "$py" client "$PEERIP" $port
