# rsockets over the RDMA CM: rstream and riostream (RDMA writes to mapped
# buffers), 4 KiB transfers with every byte verified (-T v); guest a serves,
# b connects. Then librdmacm's rdma_server/rdma_client pair (rdma_create_ep,
# one SEND each way).
rc=0
run() { # NAME SERVER-CMD... -- CLIENT-CMD...
	local name=$1
	shift
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	if [ "$ROLE" = a ]; then
		timeout 150 "${srv[@]}" >"server.$name" 2>&1 &
		local pid=$!
		sleep 1
		notify "ready.$name"
		await "done.$name" 180 || true
		wait $pid
		local r=$?
		echo "$name server exit status $r"
		cat "server.$name"
		[ $r = 0 ] || rc=1
	else
		await "ready.$name" 60 || { rc=1; return; }
		sleep 1
		timeout 120 "${cli[@]}" >"client.$name" 2>&1
		local r=$?
		echo "$name client exit status $r"
		cat "client.$name"
		[ $r = 0 ] || rc=1
		notify "done.$name"
	fi
}
run rstream rstream -b "$MYIP" -S 4096 -C 100 -T v -- rstream -s "$PEERIP" -S 4096 -C 100 -T v
run riostream riostream -b "$MYIP" -S 4096 -C 100 -T v -- riostream -s "$PEERIP" -S 4096 -C 100 -T v
run rdma_server rdma_server -s "$MYIP" -p 7479 -- rdma_client -s "$PEERIP" -p 7479
if [ "$ROLE" = b ]; then
	grep -q 'rdma_client: end 0' client.rdma_server || { echo "rdma_client did not end 0"; rc=1; }
fi
exit $rc
