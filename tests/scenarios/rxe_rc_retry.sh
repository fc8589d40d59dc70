# The RC timers between the guests: the RNR NAK timer (a SEND waits for a
# receive posted a second later; RNR retries exhausted), the retransmission
# timer (retries exhausted against a QP that does not answer), each way
# (tests/scenarios/rxe_rc_retry.c); then a pingpong as ibv_rc_pingpong
# --chk's (rxe_rc_retry.c's "lossy") with 5% of the packets each guest
# sends dropped (netem), which only retransmission recovers. About 20 s on
# the bench kernel, 75 s on the test kernel.
# timeout: 200
idx=$(rxe0_gid_index) || exit 1
bin=$(scenario_program rxe_rc_retry) || exit

rc=0
for server in a b; do
	if [ "$ROLE" = "$server" ]; then
		timeout 60 "$bin" rxe0 "$idx" server "$PEERIP" || rc=1
	else
		timeout 60 "$bin" rxe0 "$idx" client "$PEERIP" || rc=1
	fi
	barrier "retry.$server" 90 || rc=1
done

tc qdisc add dev eth0 root netem loss 5% || { echo "no netem"; exit 1; }
barrier lossy 60 || rc=1
# Not ibv_rc_pingpong: its client destroys its QP as soon as it has the
# last pong, and when the ACK of that pong is lost (5% here) the server
# retransmits to a QP that is gone, for ever (retry_cnt 7 is unlimited in
# rxe, C and rust): the server hangs. rxe_rc_retry's pingpong is the same
# exchange but keeps both QPs until both sides have every completion.
if [ "$ROLE" = a ]; then
	timeout 80 "$bin" rxe0 "$idx" server "$PEERIP" lossy || rc=1
else
	timeout 80 "$bin" rxe0 "$idx" client "$PEERIP" lossy || rc=1
fi
tc -s qdisc show dev eth0
tc qdisc del dev eth0 root
rdma statistic show link rxe0/1
exit $rc
