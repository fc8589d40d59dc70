# RC loss recovery over an impaired link (issue #7): netem on guest a's
# eth0 (its requests and its responses/ACKs) with, in turn, 1, 5 and 20%
# loss, 25% reordering, 5% duplication, 1% corruption and a delay with
# jitter; each time a pingpong as ibv_rc_pingpong --chk's (rxe_rc_retry.c's
# "lossy": 9000-byte messages of nine packets, received data checked) must
# complete. The server's side alternates. The pingpongs' TCP exchange
# crosses the same link (TCP recovers). About 80 s on the test kernel.
# Not ibv_rc_pingpong itself: its side that finishes first destroys its QP
# at once, and when its ACK of the peer's last message is lost the peer
# retransmits to a QP that is gone, for ever (retry_cnt 7 is unlimited, in
# both drivers): the peer hangs, about one exchange in five at 20% loss
# (Documentation/reliability.rst). The lossy pingpong keeps both QPs until
# both sides have all their completions.
# timeout: 400
idx=$(rxe0_gid_index) || exit 1
bin=$(scenario_program rxe_rc_retry) || exit

rc=0
n=0
server=a
# impaired NAME NETEM...: one pingpong with guest a's egress under netem.
impaired() {
	local tag=$1 port=$((18630 + n)) t0 side
	shift
	n=$((n + 1))
	if [ "$ROLE" = a ]; then
		tc qdisc add dev eth0 root netem "$@" || { echo "FAIL $tag: no netem $*"; rc=1; }
	fi
	barrier "on.$tag" 60 || { rc=1; return; }
	t0=$(date +%s)
	side=$([ "$ROLE" = "$server" ] && echo server || echo client)
	timeout 100 "$bin" rxe0 "$idx" $side "$PEERIP" lossy 9000 "${RXE_NETEM_ITERS:-10}" $port >out 2>&1 ||
		{ rc=1; echo "FAIL $tag ($side)"; }
	echo "== $tag: netem $* ($side, $(($(date +%s) - t0)) s)"
	tail -n 2 out 2>/dev/null
	if [ "$ROLE" = a ]; then
		tc -s qdisc show dev eth0 | sed -n 2p
		tc qdisc del dev eth0 root
	fi
	barrier "off.$tag" 60 || rc=1
	server=$([ $server = a ] && echo b || echo a)
}

impaired loss1 loss 1%
impaired loss5 loss 5%
impaired loss20 loss 20%
impaired reorder delay 10ms reorder 25% 50%
impaired duplicate duplicate 5%
impaired corrupt corrupt 1%
impaired jitter delay 20ms 10ms

rdma statistic show link rxe0/1
exit $rc
