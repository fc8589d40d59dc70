# ib_send_bw, ib_write_bw and ib_read_bw (RC, 64 KiB, few iterations) between
# the guests over the IPv4 RoCE v2 GID; the client's report is checked.
ops="ib_send_bw ib_write_bw ib_read_bw"
idx=$(gid_index_v4 rxe0 "$MYIP") || { echo "no RoCE v2 GID"; exit 1; }
args="-d rxe0 -x $idx -s 65536 -n 50 -F"
port=18515
if [ "$ROLE" = a ]; then
	rc=0
	for op in $ops; do
		timeout 120 $op $args -p $port >"$op.server" 2>&1 &
		srv=$!
		sleep 1
		notify "ready-$op"
		await "done-$op" 150 || rc=1
		wait $srv || { echo "$op server failed:"; cat "$op.server"; rc=1; }
	done
	exit $rc
else
	rc=0
	for op in $ops; do
		await "ready-$op" 120 || { rc=1; continue; }
		ok=0
		for try in 1 2 3; do
			if timeout 120 $op $args -p $port "$PEERIP" >"$op.client" 2>&1; then ok=1; break; fi
			sleep 1
		done
		cat "$op.client"
		if [ $ok = 1 ] && grep -q '^ *65536 *50 ' "$op.client"; then
			echo "PASS $op"
		else
			echo "FAIL $op"; rc=1
		fi
		notify "done-$op"
	done
	exit $rc
fi
