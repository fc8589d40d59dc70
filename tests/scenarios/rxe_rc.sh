# RC, UC and SRQ-fed RC end to end: ibv_rc_pingpong, ibv_uc_pingpong and
# ibv_srq_pingpong between the guests with the received data checked
# (--chk), at the pingpongs' 1024-byte path MTU: one packet (100 bytes),
# three with a short last one (3000), nine with a short last one (9000).
# Every exchange sends both ways; the server's side alternates from one
# exchange to the next, so that in the mixed set (rust <-> C) each driver
# sets up each program both as server and as client. The rdma statistic
# counters must move. About 30 s on the bench kernel, 100 s on the test
# kernel (KASAN).
# timeout: 240
idx=$(rxe0_gid_index) || exit 1

# stat NAME: the rdma statistic counter NAME of rxe0/1.
stat() {
	rdma statistic show link rxe0/1 | tr -s ' ' '\n' |
		awk -v f="$1" 'p { print; exit } $0 == f { p = 1 }'
}

sent0=$(stat sent_pkts)
rcvd0=$(stat rcvd_pkts)
rc=0
n=0
# exchange PROG SIZE SERVER: one pingpong of 20 iterations, SERVER (a|b)
# listening; a failure on either side fails the scenario on both.
exchange() {
	local prog=$1 size=$2 server=$3 tag="$1.$2.$3" extra=""
	n=$((n + 1))
	[ "$prog" = ibv_srq_pingpong ] && extra="-q 4"
	local port=$((18515 + n))
	tcp_exchange "$server" "$tag" $port 40 "$PEERIP" \
		$prog -d rxe0 -g $idx -s $size -n 20 -c -m 1024 -p $port $extra || rc=1
	echo "== $tag ($([ "$ROLE" = "$server" ] && echo server || echo client))"
	tail -n 2 out 2>/dev/null
}

server=a
for prog in ibv_rc_pingpong ibv_uc_pingpong ibv_srq_pingpong; do
	for size in 100 3000 9000; do
		exchange $prog $size $server
		server=$([ $server = a ] && echo b || echo a)
	done
done

rdma statistic show link rxe0/1
sent1=$(stat sent_pkts)
rcvd1=$(stat rcvd_pkts)
echo "sent_pkts $sent0 -> $sent1, rcvd_pkts $rcvd0 -> $rcvd1"
if [ -z "$sent1" ] || [ -z "$rcvd1" ] || [ "$sent1" -le "${sent0:-0}" ] || [ "$rcvd1" -le "${rcvd0:-0}" ]; then
	echo "the packet counters did not move"
	rc=1
fi
exit $rc
