# rping -C 10 -V between the guests (guest a serves, b connects): RDMA CM
# connect, SEND/RDMA READ/RDMA WRITE with data verification.
count=10
if [ "$ROLE" = a ]; then
	timeout 200 rping -s -a "$MYIP" -C $count -V &
	srv=$!
	sleep 1
	notify ready
	await done 240 || true
	wait $srv
	rc=$?
	echo "server exit status $rc"
	exit $rc
else
	await ready 60 || exit 1
	rc=1
	for try in 1 2 3; do
		timeout 180 rping -c -a "$PEERIP" -C $count -V -v >rping.out 2>&1 && { rc=0; break; }
		sleep 2
	done
	tail -n 3 rping.out
	notify done
	exit $rc
fi
