# The rxe network I/O without a transport (issue #4 item 1):
# - with rxe0 on eth0 there is a UDP socket on port 4791, IPv4 and IPv6;
# - each guest sends the other UDP datagrams to port 4791: malformed ones
#   (empty, shorter than a BTH, bad version, QPN 0, reserved opcode),
#   well-formed BTHs to QPNs that do not exist, one to the limited broadcast
#   address (none of rxe0's GIDs; the sender gets it too) and, if reachable,
#   one to the peer's IPv6 link-local address; the receiver sees each reach
#   the socket (UDP InDatagrams, no NoPorts) and be dropped by rdma_rxe (one
#   skb:kfree_skb event located in rdma_rxe per datagram), with no port
#   counter changed (the C driver counts no drop);
# - the socket goes with the last device of its namespace and comes back
#   with the next one;
# - `rdma link add` in another namespace (a veth end moved into it) opens
#   that namespace's own socket, kept while any of its devices exists;
#   deleting the namespace removes its device.
# A mixed pair (c and rust) checks both drivers receive alike.
# Leaks are kmemleak's (checked at the end of the run).
# 160-190 s on the test kernel alone; with a second guest pair on the two
# cores each namespace step takes 40-50 s and the whole over 300.
# timeout: 500
set -e
modprobe ib_uverbs
modprobe rdma_rxe

NS=rxenet
fail() { echo "FAIL: $*"; exit 1; }
cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	ip link del rxv0 2>/dev/null || true
}
trap cleanup EXIT

# has_socket [NETNS] FILE: a socket on port 4791 (0x12B7) in /proc/net/FILE.
has_socket() {
	if [ $# = 2 ]; then
		ip netns exec "$1" grep -q ':12B7 ' "/proc/net/$2"
	else
		grep -q ':12B7 ' "/proc/net/$1"
	fi
}
wait_gone() { # DEV
	local n=100
	while [ -e "/sys/class/infiniband/$1" ]; do
		n=$((n - 1))
		[ $n -gt 0 ] || fail "$1 still exists"
		sleep 0.2
	done
}
udp_stat() { # FIELD: the UDP (IPv4 and IPv6) statistic, /proc/net/snmp{,6}
	local v4 v6
	v4=$(awk -v f="$1" '$1 == "Udp:" { if (!n) { for (i = 2; i <= NF; i++) h[i] = $i; n = 1 } else for (i = 2; i <= NF; i++) if (h[i] == f) print $i }' /proc/net/snmp)
	v6=$(awk -v f="Udp6$1" '$1 == f { print $2 }' /proc/net/snmp6)
	echo $((v4 + ${v6:-0}))
}

[ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev eth0
wait_gid rxe0 "$MYIP"
has_socket udp || fail "no IPv4 socket on port 4791 with rxe0"
has_socket udp6 || fail "no IPv6 socket on port 4791 with rxe0"
ss -ulnH 'sport = :4791'

# --- received datagrams: dropped, counted as the C driver counts them -------
# Each guest sends the other the same datagrams and checks what it received.
# The drops are counted with the skb:kfree_skb tracepoint where the kernel
# has tracing (the test kernel; the bench kernel has none).
T=/sys/kernel/tracing
trace=1
[ -e $T/events ] || mount -t tracefs tracefs $T 2>/dev/null || trace=
[ -e $T/events/skb/kfree_skb/enable ] || trace=
if [ -n "$trace" ]; then
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 1 >$T/events/skb/kfree_skb/enable
	echo 1 >$T/tracing_on
fi
before=$(hw_counters rxe0)
in0=$(udp_stat InDatagrams) noports0=$(udp_stat NoPorts)
barrier armed 120
# The peer's IPv6 link-local address (from its MAC), if reachable.
[ "$ROLE" = a ] && peer_ll=fe80::5054:ff:fe00:202 || peer_ll=fe80::5054:ff:fe00:201
dst6=
for i in $(seq 50); do
	ping -6 -c1 -W1 "$peer_ll%eth0" >/dev/null 2>&1 && { dst6="$peer_ll%eth0"; break; }
	sleep 0.2
done
python3 - "$PEERIP" "$dst6" >"$SYNC/$SCENARIO.count.$ROLE" <<'EOF'
import socket, struct, sys

dst, dst6 = sys.argv[1], sys.argv[2]
PORT = 4791

def bth(opcode, flags, qpn, pkey=0xffff, psn=1):
    # opcode, SE/M/pad/version, P_Key, reserved + QPN, AckReq + PSN
    return struct.pack(">BBHII", opcode, flags, pkey, qpn & 0xFFFFFF, psn & 0xFFFFFF)

def deth(qkey, src_qp):
    return struct.pack(">II", qkey, src_qp & 0xFFFFFF)

icrc = b"\0\0\0\0"
UD_SEND_ONLY, RC_SEND_ONLY = 0x64, 0x04
packets = [
    b"",                                                   # empty
    b"\x01\x02\x03\x04\x05",                               # shorter than a BTH
    bth(RC_SEND_ONLY, 0x01, 0x123456) + bytes(16),         # version 1
    bth(RC_SEND_ONLY, 0x00, 0) + bytes(16),                # QPN 0
    bth(0x1F, 0x00, 0x123456) + bytes(16),                 # reserved opcode
    bth(UD_SEND_ONLY, 0, 0x123456) + deth(0x80010000, 0x11) + b"u" * 32 + icrc,
    bth(RC_SEND_ONLY, 0, 0xABCDEF) + b"r" * 32 + icrc,     # no such QP
    bth(UD_SEND_ONLY, 0, 0xFFFFFF) + deth(0x80010000, 0x11) + b"m" * 16 + icrc,
]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
for p in packets:
    n += s.sendto(p, (dst, PORT)) >= 0
# To the limited broadcast address: for rxe0's netdev, but none of its GIDs.
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
b.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"eth0")
n += b.sendto(bth(RC_SEND_ONLY, 0, 0x123456) + bytes(20), ("255.255.255.255", PORT)) >= 0
if dst6:
    addr, scope = dst6.split("%")
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    n += s6.sendto(bth(RC_SEND_ONLY, 0, 0x123456) + bytes(20),
                   (addr, PORT, 0, socket.if_nametoindex(scope))) >= 0
print(n)
EOF
echo "sent $(cat "$SYNC/$SCENARIO.count.$ROLE") datagrams to $PEERIP${dst6:+ and $dst6}"
barrier sent 120
sleep 2
if [ -n "$trace" ]; then
	echo 0 >$T/tracing_on
	echo 0 >$T/events/skb/kfree_skb/enable
fi
# The peer's datagrams, and this guest's own broadcast (looped back).
sent=$(($(cat "$SYNC/$SCENARIO.count.$OTHER") + 1))
in=$(($(udp_stat InDatagrams) - in0)) noports=$(($(udp_stat NoPorts) - noports0))
if [ -n "$trace" ]; then
	drops=$(grep -c 'kfree_skb:.*\[rdma_rxe\]' $T/trace || true)
	grep 'kfree_skb:.*\[rdma_rxe\]' $T/trace | sed 's/.*location=//' | sort | uniq -c
else
	drops="$sent (not counted: no tracing)"
fi
after=$(hw_counters rxe0)
echo "datagrams received (from $OTHER ($PEERSET), and the own broadcast): $sent; Udp InDatagrams +$in, NoPorts +$noports; dropped in rdma_rxe ($MYSET): $drops"
rdma statistic show link rxe0/1
[ "$in" -ge "$sent" ] || fail "only $in of $sent datagrams reached a UDP socket"
[ "$noports" = 0 ] || fail "$noports datagrams found no socket"
[ -z "$trace" ] || [ "$drops" = "$sent" ] || fail "$drops drops in rdma_rxe for $sent datagrams"
if [ "$before" != "$after" ]; then
	diff <(echo "$before") <(echo "$after") || true
	fail "port counters changed"
fi
barrier checked 120

# --- the socket lives with the devices of its namespace ---------------------
rdma link delete rxe0
wait_gone rxe0
! has_socket udp || fail "IPv4 socket on port 4791 without a device"
! has_socket udp6 || fail "IPv6 socket on port 4791 without a device"
rdma link add rxe0 type rxe netdev eth0
has_socket udp || fail "no IPv4 socket after rdma link add"
has_socket udp6 || fail "no IPv6 socket after rdma link add"

# --- another namespace: its own socket --------------------------------------
ip netns add "$NS"
ip link add rxv0 type veth peer name rxv1
ip link set rxv1 netns "$NS"
ip link add rxv2 netns "$NS" type veth peer name rxv3 netns "$NS"
ip link set rxv0 up
for d in rxv1 rxv2 rxv3; do ip -n "$NS" link set "$d" up; done
! has_socket "$NS" udp || fail "socket in $NS before any device"
ip netns exec "$NS" rdma link add "rxn${ROLE}0" type rxe netdev rxv1
ip netns exec "$NS" rdma link show "rxn${ROLE}0/1" | grep -q 'netdev rxv1' || fail "rxn${ROLE}0 is not on rxv1"
has_socket "$NS" udp || fail "no IPv4 socket in $NS with rxn${ROLE}0"
has_socket "$NS" udp6 || fail "no IPv6 socket in $NS with rxn${ROLE}0"
ip netns exec "$NS" ss -ulnH 'sport = :4791'
# A second device of the namespace shares the socket.
ip netns exec "$NS" rdma link add "rxn${ROLE}1" type rxe netdev rxv2
ip netns exec "$NS" rdma link delete "rxn${ROLE}0"
has_socket "$NS" udp || fail "the socket of $NS went with one of its two devices"
ip netns exec "$NS" rdma link delete "rxn${ROLE}1"
! has_socket "$NS" udp || fail "IPv4 socket in $NS without a device"
! has_socket "$NS" udp6 || fail "IPv6 socket in $NS without a device"
has_socket udp || fail "the initial namespace lost its socket"
# Deleting the namespace removes its device (its netdev goes) and socket.
ip netns exec "$NS" rdma link add "rxn${ROLE}0" type rxe netdev rxv1
ip netns del "$NS"
wait_gone "rxn${ROLE}0"
ip link show rxv0 >/dev/null 2>&1 && fail "rxv0 outlived its peer"
has_socket udp || fail "the initial namespace lost its socket"
rdma link show
echo "rxe_net: ok"
