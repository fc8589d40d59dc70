# Debugging aid, in no set: ibv_rc_pingpong -s 9000 -n 20 between the
# guests RXE_LOOP times (40 by default), the server's side alternating. When
# a run has not finished after about 20 s both guests dump their QPs
# (``rdma -d res show qp``: each side's next send and expected receive
# PSN), the counters, the netdev's in-flight bytes, then ping the peer
# once to see whether traffic wakes it up. Used to chase the rust<->C
# stall in Documentation/reliability.rst; on the test kernel a loop takes
# about 20 s.
# timeout: 1500
idx=$(rxe0_gid_index) || exit 1
rc=0
N=${RXE_LOOP:-40}
for n in $(seq 1 $N); do
	server=$([ $((n % 2)) = 1 ] && echo a || echo b)
	tag=loop$n
	port=$((19000 + n))
	args="-d rxe0 -g $idx -s 9000 -n 20 -c -m 1024 -p $port"
	if [ "$ROLE" = "$server" ]; then
		ibv_rc_pingpong $args >out 2>&1 &
		pid=$!
		i=0
		while ! tcp_listening $port && kill -0 $pid 2>/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
		notify "ready.$tag"
	else
		await "ready.$tag" 60 || { rc=1; break; }
		ibv_rc_pingpong $args "$PEERIP" >out 2>&1 &
		pid=$!
	fi
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	if kill -0 $pid 2>/dev/null; then
		echo "HANG $tag ($([ "$ROLE" = "$server" ] && echo server || echo client))"
		rdma -d res show qp
		rdma statistic show link rxe0/1
		cat out
		echo "bql inflight: $(cat /sys/class/net/eth0/queues/tx-*/byte_queue_limits/inflight 2>/dev/null | tr '\n' ' ')"
		ip -s link show eth0 | sed -n '3,6p'
		ping -c 3 -i 0.3 "$PEERIP" >/dev/null 2>&1
		i=0
		while kill -0 $pid 2>/dev/null && [ $i -lt 25 ]; do sleep 0.2; i=$((i + 1)); done
		kill -0 $pid 2>/dev/null && echo "still hung after a ping" || echo "RESUMED after a ping"
		echo "bql inflight: $(cat /sys/class/net/eth0/queues/tx-*/byte_queue_limits/inflight 2>/dev/null | tr '\n' ' ')"
		hung=1
	else
		hung=0
	fi
	barrier "dumped.$tag" 60
	kill -9 $pid 2>/dev/null
	wait $pid || { [ $hung = 1 ] || { echo "FAIL $tag"; cat out; }; rc=1; }
	barrier "end.$tag" 60
	echo "== $tag $(tail -n 1 out)"
done
rdma statistic show link rxe0/1
exit $rc
