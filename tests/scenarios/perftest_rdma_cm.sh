# ib_send_bw, ib_write_bw and ib_read_bw with -R: perftest connecting through
# librdmacm (RDMA CM over rdma_ucm), 64 KiB messages, one tool after the other.
port=18516
rc=0
for tool in ib_send_bw ib_write_bw ib_read_bw; do
	port=$((port + 1))
	if [ "$ROLE" = a ]; then
		timeout 120 $tool -R -d rxe0 -s 65536 -n 50 -F -p $port >"server.$tool" 2>&1 &
		srv=$!
		sleep 1
		notify "ready.$tool"
		await "done.$tool" 150
		wait $srv || rc=1
		echo "$tool server:"
		cat "server.$tool"
	else
		await "ready.$tool" 60 || exit 1
		ok=0
		for try in 1 2 3; do
			timeout 120 $tool -R -d rxe0 -s 65536 -n 50 -F -p $port "$PEERIP" >"client.$tool" 2>&1 && { ok=1; break; }
			sleep 1
		done
		echo "$tool client:"
		cat "client.$tool"
		notify "done.$tool"
		[ $ok = 1 ] && grep -q '^ *65536 *50 ' "client.$tool" || { echo "$tool FAILED"; rc=1; }
	fi
done
exit $rc
