# RC end to end: ibv_rc_pingpong between the guests with the received data
# checked (--chk), messages of one packet and of several (3000 bytes: three
# packets at the 1024-byte path MTU, the last one short). Run in the rust
# set (rust <-> rust) and mixed (rust <-> C, both directions).
# timeout: 300
modprobe ib_uverbs
modprobe rdma_rxe
[ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev eth0
wait_gid rxe0 "$MYIP" || exit 1
idx=$(gid_index_v4 rxe0 "$MYIP") || { echo "no RoCE v2 GID"; exit 1; }
rc=0
for size in 100 3000; do
	args="-d rxe0 -g $idx -s $size -n 50 -c -m 1024"
	if [ "$ROLE" = a ]; then
		timeout 100 ibv_rc_pingpong $args >server.out 2>&1 &
		srv=$!
		sleep 1
		notify "ready$size"
		await "done$size" 120
		wait $srv || rc=1
		cat server.out
	else
		await "ready$size" 60 || exit 1
		sleep 1
		timeout 100 ibv_rc_pingpong $args "$PEERIP" >client.out 2>&1 || rc=1
		notify "done$size"
		cat client.out
	fi
done
rdma statistic show link rxe0/1
exit $rc
