# A slow passive side: guest a's server gets the connect request and does
# not accept until the client's CM has retransmitted its REQ (after about
# 4.6 s, the RDMA CM's REQ timeout) and guest a's CM has answered that
# duplicate with an MRA; then it accepts. The client must see ESTABLISHED
# (the MRA stretched its REQ timeout), both sides DISCONNECTED, and the
# CM counters of /sys/class/infiniband/rxe0/ports/1 must show the MRA sent by a
# (cm_tx_msgs/mra, cm_rx_duplicates/req) and received by b (cm_rx_msgs/mra,
# cm_tx_retries/req). tests/scenarios/cm_mra.py.
# timeout: 120
port=20093
py="$RRXE_REPO/tests/scenarios/cm_mra.py"
wait_gid rxe0 "$MYIP" || exit 1
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
timeout 90 python3 "$py" client "$PEERIP" $port
