# UD end to end: ibv_ud_pingpong between the guests, the received data
# checked (--chk), 512-byte messages (within the 1024-byte path MTU of a
# 1500-byte Ethernet). Run in the rust set (rust <-> rust) and mixed
# (rust <-> C, both directions of every exchange).
# timeout: 300
idx=$(rxe0_gid_index) || exit 1
args="-d rxe0 -g $idx -s 512 -n 50 -c"
if [ "$ROLE" = a ]; then
	timeout 150 ibv_ud_pingpong $args >server.out 2>&1 &
	srv=$!
	sleep 1
	notify ready
	await done 170
	wait $srv
	rc=$?
	cat server.out
else
	await ready 60 || exit 1
	sleep 1
	timeout 150 ibv_ud_pingpong $args "$PEERIP" >client.out 2>&1
	rc=$?
	notify done
	cat client.out
fi
rdma statistic show link rxe0/1
exit $rc
