# ib_send_bw between the guests (64 KiB messages) (the main job's benchmark).
idx=$(gid_index_v4 rxe0 "$MYIP") || { echo "no RoCE v2 GID"; exit 1; }
args="-d rxe0 -x $idx -s 65536 -n 200 -F"
if [ "$ROLE" = a ]; then
	timeout 300 ib_send_bw $args >server.out 2>&1 &
	srv=$!
	sleep 1
	notify ready
	await done 320
	wait $srv
else
	await ready 60 || exit 1
	rc=1
	for try in 1 2 3; do
		timeout 300 ib_send_bw $args "$PEERIP" >client.out 2>&1 && { rc=0; break; }
		sleep 1
	done
	notify done
	cat client.out
	exit $rc
fi
