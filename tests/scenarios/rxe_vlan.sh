# RoCE over a VLAN device on rxe0's netdev: VLAN 100 on eth0 in both guests
# with addresses 198.51.100.{1,2}; rxe0 (on eth0) gets the RoCE v2 GID of
# the VLAN address, and traffic from that GID must leave tagged, from the
# VLAN device (the C driver sends from the GID's netdev, rxe_init_packet),
# or the peer, receiving it untagged on eth0, finds no such GID there and
# drops it. ibv_rc_pingpong and ibv_ud_pingpong (--chk) on the VLAN GID,
# each guest once as server; then VLAN 100 is removed and its GID goes.
# timeout: 300
rxe0_add
vip() { echo "198.51.100.${1##*.}"; }
ip link add link eth0 name eth0.100 type vlan id 100 || exit 1
ip addr add "$(vip "$MYIP")/24" dev eth0.100
ip link set eth0.100 up
cleanup() { ip link del eth0.100 2>/dev/null; }
trap cleanup EXIT
# The VLAN address's RoCE v2 GID index.
vlan_gid() { gid_index_v4 rxe0 "$(vip "$MYIP")"; }
for i in $(seq 100); do
	vlan_gid >/dev/null && break
	sleep 0.2
done
if ! idx=$(vlan_gid); then
	echo "no RoCE v2 GID for $(vip "$MYIP") on rxe0"
	ip -br addr
	grep -H . /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/* 2>/dev/null
	exit 1
fi
echo "[${SECONDS}s] VLAN 100 address $(vip "$MYIP"): GID index $idx, netdev $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/$idx)"
vstat() { cat "/sys/class/net/eth0.100/statistics/$1"; }
sent() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts; }
tx0=$(vstat tx_packets) rx0=$(vstat rx_packets) sent0=$(sent)

rc=0
n=0
# exchange PROG SERVER: one pingpong of 20 iterations, SERVER (a|b) listening.
exchange() {
	local prog=$1 server=$2 tag="$1.$2"
	n=$((n + 1))
	local port=$((18615 + n))
	tcp_exchange "$server" "$tag" $port 40 "$(vip "$PEERIP")" \
		$prog -d rxe0 -g $idx -s 1000 -n 20 -c -p $port || rc=1
	echo "[${SECONDS}s] == $tag ($([ "$ROLE" = "$server" ] && echo server || echo client))"
	tail -n 2 out 2>/dev/null
}
exchange ibv_rc_pingpong a
exchange ibv_rc_pingpong b
exchange ibv_ud_pingpong a
exchange ibv_ud_pingpong b
tx1=$(vstat tx_packets) rx1=$(vstat rx_packets) sent1=$(sent)
echo "rxe0 sent_pkts $sent0 -> $sent1, eth0.100 tx_packets $tx0 -> $tx1, rx_packets $rx0 -> $rx1"
# Each exchange sends 20 messages from each side at the least; every RoCE
# packet rxe0 sent must have left through eth0.100 (which also carries the
# pingpongs' TCP exchange), and the peer's came in through it, tagged.
[ $((sent1 - sent0)) -ge 80 ] || { echo "rxe0 sent too few packets"; rc=1; }
[ $((tx1 - tx0)) -ge $((sent1 - sent0)) ] || { echo "RoCE packets left untagged (not through eth0.100)"; rc=1; }
[ $((rx1 - rx0)) -ge 80 ] || { echo "too few packets came in through eth0.100"; rc=1; }
barrier vlan-done 60 || rc=1
echo "[${SECONDS}s] deleting eth0.100"
ip link del eth0.100
for i in $(seq 50); do
	vlan_gid >/dev/null || break
	sleep 0.2
done
! vlan_gid >/dev/null || { echo "the VLAN GID stayed"; rc=1; }
echo "[${SECONDS}s] done"
exit $rc
