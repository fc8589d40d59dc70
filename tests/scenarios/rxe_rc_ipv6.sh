# RC over IPv6: ibv_rc_pingpong between the guests on rxe0's RoCE v2 GID
# of eth0's IPv6 link-local address (the RDMA core's default GID, from the
# MAC), with the received data checked (--chk), at 1024-byte path MTU:
# 9000 bytes (nine packets a message) and 32768 (32). The server's side
# alternates, so that in the mixed set (rust <-> C) each driver sends and
# receives both ways. The packets must have come in over IPv6
# (Udp6InDatagrams of /proc/net/snmp6, which the UDP layer counts for its
# tunnel sockets; nothing counts datagrams sent from outside a socket's
# sendmsg) and be counted by rxe0 on both sides. With this project's
# rdma_rxe, a task call's packets leave in batches (rxe/net.rs): the IPv6
# layer must have passed fewer skbs than rxe0 sent packets
# (Ip6OutTransmits counts an skb before the segmentation splits it).
# Retransmissions are not failures: on the test kernel a C requester
# facing this driver retries now and then, its packets all delivered (its
# timer runs from a message's first packet and is not pushed back by the
# later ones; Documentation/benchmarks.rst, "What the short rows are made
# of"). About 20 s on the bench kernel, 60 s on the test kernel (KASAN).
# timeout: 240
rxe0_add || { echo "no rxe0"; exit 1; }

# rxe0's RoCE v2 GID for this guest's link-local address
# (fe80::5054:ff:fe00:2xx, run-pair.sh's MACs), once the core added it.
[ "$ROLE" = a ] && ll=fe80:0000:0000:0000:5054:00ff:fe00:0201 ||
	ll=fe80:0000:0000:0000:5054:00ff:fe00:0202
ll_gid_index() {
	local try
	for try in $(seq 50); do
		gid_index rxe0 "$ll" && return 0
		nap 0.2
	done
	return 1
}
idx=$(ll_gid_index) || { echo "no RoCE v2 GID for eth0's link-local address"; exit 1; }
echo "rxe0 GID $idx: $(cat /sys/class/infiniband/rxe0/ports/1/gids/$idx)"

# snmp6 NAME: the IPv6 statistic NAME (Udp6InDatagrams, Ip6OutTransmits).
snmp6() { awk -v f="$1" '$1 == f { print $2 }' /proc/net/snmp6; }
stat() { hw_counters rxe0 | awk -v f="$1" '$1 == f { print $2 }'; }

in0=$(snmp6 Udp6InDatagrams) xmit0=$(snmp6 Ip6OutTransmits)
sent0=$(stat sent_pkts) rcvd0=$(stat rcvd_pkts)
rc=0
n=0
server=a
for size in 9000 32768; do
	for turn in 1 2; do
		n=$((n + 1))
		tag=rc6.$size.$server
		port=$((18615 + n))
		tcp_exchange "$server" "$tag" $port 90 "$PEERIP" \
			ibv_rc_pingpong -d rxe0 -g "$idx" -s $size -n 20 -c -m 1024 -p $port || rc=1
		echo "== $tag ($([ "$ROLE" = "$server" ] && echo server || echo client))"
		tail -n 2 out 2>/dev/null
		server=$([ $server = a ] && echo b || echo a)
	done
done

in1=$(snmp6 Udp6InDatagrams) xmit1=$(snmp6 Ip6OutTransmits)
sent1=$(stat sent_pkts) rcvd1=$(stat rcvd_pkts)
echo "Udp6InDatagrams $in0 -> $in1, Ip6OutTransmits $xmit0 -> $xmit1"
echo "sent_pkts $sent0 -> $sent1, rcvd_pkts $rcvd0 -> $rcvd1"
hw_counters rxe0 | awk '$2 != 0 && $1 ~ /err|retry|seq|duplicate/'
# Each side sends and receives 20 messages of each size in each of the
# four exchanges: at least 2 * 20 * (9 + 32) packets, ACKs not counted.
min=$((2 * 20 * (9 + 32)))
for v in "Udp6InDatagrams $in0 $in1" "sent_pkts $sent0 $sent1" "rcvd_pkts $rcvd0 $rcvd1"; do
	set -- $v
	if [ -z "$3" ] || [ $(($3 - ${2:-0})) -lt $min ]; then
		echo "$1 moved by $(($3 - ${2:-0})), fewer than the $min packets sent each way"
		rc=1
	fi
done
# Batches: with at least 32 packets a message each way, this driver's
# 16-packet batches leave well under one skb a packet (3/4 is a bound
# that ND, ACKs sent alone and a batch cut short by a retry stay under).
case $MYSET in
rust | full)
	skbs=$((${xmit1:-0} - ${xmit0:-0})) pkts=$((${sent1:-0} - ${sent0:-0}))
	if [ $((skbs * 4)) -ge $((pkts * 3)) ]; then
		echo "the IPv6 layer passed $skbs skbs for $pkts packets: not batched"
		rc=1
	fi
	;;
esac
exit $rc
