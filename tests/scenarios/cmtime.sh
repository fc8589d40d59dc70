# cmtime -c 20: RDMA CM connection setup and teardown timing (every step).
if [ "$ROLE" = a ]; then
	timeout 200 cmtime -b "$MYIP" -c 20 &
	srv=$!
	sleep 1
	notify ready
	await done 240
	kill $srv 2>/dev/null
	wait $srv
	exit 0
else
	await ready 60 || exit 1
	timeout 180 cmtime -s "$PEERIP" -c 20 >cmtime.out 2>&1; rc=$?
	cat cmtime.out
	notify done
	[ $rc = 0 ] && grep -q 'connect' cmtime.out
fi
