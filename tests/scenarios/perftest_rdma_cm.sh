# ib_write_bw -R: perftest connecting through librdmacm (RDMA CM over rdma_ucm).
port=18516
if [ "$ROLE" = a ]; then
	timeout 120 ib_write_bw -R -d rxe0 -s 65536 -n 50 -F -p $port >server.out 2>&1 &
	srv=$!
	sleep 1
	notify ready
	await done 150
	wait $srv; rc=$?
	cat server.out
	exit $rc
else
	await ready 60 || exit 1
	rc=1
	for try in 1 2 3; do
		timeout 120 ib_write_bw -R -d rxe0 -s 65536 -n 50 -F -p $port "$PEERIP" >client.out 2>&1 && { rc=0; break; }
		sleep 1
	done
	cat client.out
	notify done
	[ $rc = 0 ] && grep -q '^ *65536 *50 ' client.out
fi
