# rping -V -C 100 at 64 B, 4 KiB and 64 KiB - 1 (guest a serves, b
# connects; the c-mixed set has the C driver serve): RDMA CM connect and
# disconnect, SEND, RDMA READ and RDMA WRITE with every byte verified, once
# per size. 65535 is rping's largest size: it refuses 65536 ("valid range
# is 23 to 65536" but the check is size < 65536).
# timeout: 600
count=100
rc=0
for size in 64 4096 65535; do
	if [ "$ROLE" = a ]; then
		timeout 200 rping -s -a "$MYIP" -C $count -S $size -V >"server.$size" 2>&1 &
		srv=$!
		sleep 1
		notify "ready.$size"
		await "done.$size" 240 || true
		wait $srv
		r=$?
		echo "size $size: server exit status $r ($(tail -n1 "server.$size"))"
		[ $r = 0 ] || rc=1
	else
		await "ready.$size" 60 || exit 1
		ok=0
		for try in 1 2 3; do
			timeout 180 rping -c -a "$PEERIP" -C $count -S $size -V >"client.$size" 2>&1 && { ok=1; break; }
			sleep 2
		done
		echo "size $size: client $([ $ok = 1 ] && echo ok || echo FAILED) after $try tries"
		tail -n 3 "client.$size"
		[ $ok = 1 ] || rc=1
		notify "done.$size"
	fi
done
exit $rc
