# Teardown and leaks: the device's life cycle, with users and traffic.
#   1. CYCLES x rdma link add / ibv_devinfo / rdma link delete;
#   2. a process holding the device (one of every object, datagrams in
#      flight; or an ibv_ud_pingpong server waiting): rdma link delete
#      returns while the process lives, the process adds no reference to
#      rdma_rxe, and rmmod rdma_rxe unloads the module with its device
#      (user contexts are disassociated, as by C; the C module itself is
#      held while a device exists, and one more time while held, so its
#      rmmod is refused: recorded, not failed);
#   3. ibv_ud_pingpong between the guests killed (SIGKILL) mid-connect and
#      mid-transfer, guest b's eth0 down/up during the transfer, the device
#      deleted right after (while the peer may still send to it);
#   4. eth0 down/up with a device and a holder (port DOWN, then ACTIVE with
#      its GID back);
#   5. the bound netdev (a veth) deleted under the device, with and without
#      a holder: the device goes away with it.
# After each step: no device left, rdma_rxe's reference count back to 0.
# At the end: no vmalloc area of rdma_rxe, kmemleak (test kernel) reports
# nothing with an RDMA frame, the slab usage change is printed; rxe0 is
# added back for the scenarios after this one. Steps 2-5 run
# max(1, CYCLES/10) times. CYCLES is RXE_LIFECYCLE_CYCLES, 3 by default (an
# add/delete takes 10-20 s on the test kernel under TCG, and the whole
# suite must fit CI's 90 minutes); issue #7's 100:
# RRXE_GUEST_ENV='export RXE_LIFECYCLE_CYCLES=100' in the environment of
# tests/run or run-pair.sh. Every wait inside is bounded; the scenario's own
# bound below is for the long variant, which took 2665 s on the test kernel
# (another guest pair running; kmemleak clean).
# timeout: 4000
CYCLES=${RXE_LIFECYCLE_CYCLES:-3}
K=$((CYCLES / 10))
[ $K -ge 1 ] || K=1
[ "$CYCLES" -le 10 ] || echo "long variant: $CYCLES cycles"

fail() { echo "FAIL: $*"; cleanup; exit 1; }
holder=
cleanup() {
	[ -z "$holder" ] || kill -9 $holder 2>/dev/null
	ip link del rrxe_v0 2>/dev/null
	true
}
refcnt() { cat /sys/module/rdma_rxe/refcnt; }
t0=$(date +%s)
step() { echo "[$(($(date +%s) - t0)) s] $*"; }

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local n=$(($1 * 5))
	shift
	until "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.2
	done
}
port_is() { grep -q "$2" "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }
gone() { [ ! -e "/sys/class/infiniband/$1" ]; }
add() { # DEV NETDEV
	rdma link add "$1" type rxe netdev "$2" || fail "rdma link add $1 netdev $2"
}
del() { # DEV: bounded, a hang fails
	timeout 60 rdma link delete "$1"
	local rc=$?
	[ $rc != 124 ] || fail "rdma link delete $1 hung"
	[ $rc = 0 ] || fail "rdma link delete $1: status $rc"
	gone "$1" || fail "$1 still there after delete"
}
settled() { # after each step: no device, no module reference
	local d
	d=$(ls /sys/class/infiniband 2>/dev/null)
	[ -z "$d" ] || fail "devices left: $d"
	wait_for 10 test "$(refcnt)" = 0 || fail "rdma_rxe refcnt $(refcnt) with no device"
}
holder_start() { # DEV GID_INDEX: one of every object
	"$limits" "$1" "$2" hold >hold.out 2>&1 &
	holder=$!
	wait_for 30 grep -q holding hold.out || { cat hold.out; fail "holder did not start"; }
}
holder_kill() { # the holder may have ended on its own (a peer gone)
	if kill -9 $holder 2>/dev/null; then
		wait $holder 2>/dev/null
	else
		wait $holder
		echo "  (it had ended by itself, status $?: $(tail -n1 pp.out 2>/dev/null))"
	fi
	holder=
}
slab_kb() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }

modprobe ib_uverbs
modprobe rdma_rxe
limits=$(scenario_program rxe_limits) || exit
[ ! -e /sys/class/infiniband/rxe0 ] || del rxe0
# One cycle first: what is allocated once (caches, workqueues) is not a leak.
add rxe0 eth0
wait_gid rxe0 "$MYIP" || fail "no GID"
del rxe0
settled
slab0=$(slab_kb)
rr_before=$(refcnt)

# --- 1. add/delete cycles -----------------------------------------------------
step "1. $CYCLES add/delete cycles"
for i in $(seq "$CYCLES"); do
	add rxe0 eth0
	ibv_devinfo -d rxe0 >/dev/null || fail "cycle $i: ibv_devinfo"
	del rxe0
done
settled

# --- 2. delete and rmmod while a process holds the device ---------------------
hold() { # I: the holder of cycle I on rxe0
	add rxe0 eth0
	wait_gid rxe0 "$MYIP" || fail "no GID"
	idx=$(gid_index_v4 rxe0 "$MYIP")
	held_base=$(refcnt)
	if [ $(($1 % 2)) = 1 ]; then
		what="a process with one of every object"
		holder_start rxe0 "$idx"
	else
		what="an ibv_ud_pingpong server waiting"
		ibv_ud_pingpong -d rxe0 -g "$idx" -p 18600 >pp.out 2>&1 &
		holder=$!
		sleep 1
	fi
}
for i in $(seq "$K"); do
	hold $i
	step "2.$i rdma link delete, held by $what (refcnt $(refcnt))"
	# Both drivers disassociate user contexts (an empty
	# disassociate_ucontext): the delete returns while the holder lives,
	# the core destroying the holder's objects under it.
	rm -f del.rc
	(timeout 60 rdma link delete rxe0; echo $? >del.rc) &
	dp=$!
	wait_for 30 test -e del.rc || fail "rdma link delete waits for the holder"
	kill -0 $holder 2>/dev/null || echo "  (the holder ended meanwhile: $(tail -n1 hold.out pp.out 2>/dev/null))"
	echo "  rdma link delete returned while held: status $(cat del.rc)"
	holder_kill
	wait $dp
	[ "$(cat del.rc)" = 0 ] || fail "rdma link delete while held: status $(cat del.rc)"
	wait_for 10 gone rxe0 || fail "rxe0 still there"
	settled

	hold $((i + 1))
	step "2.$i rmmod rdma_rxe, held by $what (refcnt $(refcnt))"
	# No module reference for a user context that can be disassociated.
	# (The in-tree C module shows one more while held, measured: recorded.)
	if [ "$(refcnt)" != "$held_base" ]; then
		[ "$MYSET" = c ] ||
			fail "the holder took a reference on rdma_rxe: refcnt $(refcnt), $held_base without it"
		echo "  C: refcnt $(refcnt) while held, $held_base without the holder"
	fi
	timeout 30 rmmod rdma_rxe >rmmod.out 2>&1
	rc=$?
	[ $rc != 124 ] || fail "rmmod rdma_rxe hung while in use"
	if [ $rc != 0 ] && [ "$MYSET" = c ]; then
		# The C module is held while a device exists (see
		# Documentation/rxe-device.rst), holder or not.
		echo "  refused (C, refcnt $held_base with the device alone): $(cat rmmod.out)"
		grep -q 'in use' rmmod.out || fail "rmmod refused, but not as in use"
		holder_kill
		del rxe0
	else
		# The module goes, its device with it, under the live holder.
		[ $rc = 0 ] || fail "rmmod rdma_rxe refused under a holder: $(cat rmmod.out)"
		echo "  rdma_rxe unloaded, its device removed under the holder"
		! grep -q '^rdma_rxe ' /proc/modules || fail "rmmod succeeded, rdma_rxe still loaded"
		gone rxe0 || fail "rxe0 still there after rmmod"
		holder_kill
		modprobe rdma_rxe || fail "modprobe rdma_rxe after the rmmod"
	fi
	settled
done

# --- 3. SIGKILL mid-connect and mid-transfer between the guests ---------------
for i in $(seq "$K"); do
	add rxe0 eth0
	wait_gid rxe0 "$MYIP" || fail "no GID"
	wait_for 20 port_is rxe0 ACTIVE || fail "port not ACTIVE"
	idx=$(gid_index_v4 rxe0 "$MYIP")
	# Odd cycles kill while transferring, even ones while connecting.
	delay=$([ $((i % 2)) = 1 ] && echo 4 || echo 0.3)
	barrier "k$i.up" 60 || fail "peer"
	args="-d rxe0 -g $idx -p 18601 -s 512 -n 1000000"
	if [ "$ROLE" = a ]; then
		ibv_ud_pingpong $args >pp.out 2>&1 &
		holder=$!
		sleep 1
		notify "k$i.srv"
	else
		await "k$i.srv" 30 || fail "peer"
		ibv_ud_pingpong $args "$PEERIP" >pp.out 2>&1 &
		holder=$!
	fi
	if [ "$delay" = 4 ] && [ "$ROLE" = b ]; then
		sleep 2
		ip link set eth0 down
		sleep 0.5
		ip link set eth0 up
		sleep 1.5
	else
		sleep "$delay"
	fi
	pkts=$(rdma statistic show link rxe0/1 | grep -o 'sent_pkts [0-9]*')
	holder_kill
	step "3.$i killed after ${delay} s ($pkts)"
	del rxe0
	settled
	barrier "k$i.down" 60 || fail "peer"
done

# --- 4. eth0 down/up under a device and a holder -------------------------------
add rxe0 eth0
wait_gid rxe0 "$MYIP" || fail "no GID"
holder_start rxe0 "$(gid_index_v4 rxe0 "$MYIP")"
for i in $(seq "$K"); do
	ip link set eth0 down
	wait_for 20 port_is rxe0 DOWN || fail "port not DOWN after eth0 down: $(cat /sys/class/infiniband/rxe0/ports/1/state)"
	ip link set eth0 up
	wait_for 30 port_is rxe0 ACTIVE || fail "port not ACTIVE after eth0 up"
	wait_gid rxe0 "$MYIP" || fail "GID not back after eth0 up"
done
step "4. eth0 down/up $K times under a held device"
holder_kill
del rxe0
settled
barrier eth-done 60 || fail "peer"

# --- 5. the netdev deleted under the device -----------------------------------
for i in $(seq "$K"); do
	ip link add rrxe_v0 type veth peer name rrxe_v1 || fail "veth"
	ip addr add 198.51.100.1/24 dev rrxe_v0
	ip link set rrxe_v1 up
	ip link set rrxe_v0 up
	add rxe1 rrxe_v0
	if [ $((i % 2)) = 1 ]; then
		wait_gid rxe1 198.51.100.1 || fail "no GID on rxe1"
		holder_start rxe1 "$(gid_index_v4 rxe1 198.51.100.1)"
		(timeout 60 ip link del rrxe_v0; echo $? >ipdel.rc) &
		dp=$!
		sleep 2
		if [ -e ipdel.rc ]; then
			what="returned while held"
		else
			what="waited for the holder"
		fi
		holder_kill
		wait $dp
		[ "$(cat ipdel.rc)" = 0 ] || fail "ip link del rrxe_v0: status $(cat ipdel.rc)"
	else
		what="no holder"
		timeout 60 ip link del rrxe_v0 || fail "ip link del rrxe_v0"
	fi
	wait_for 30 gone rxe1 || fail "rxe1 still there after its netdev was deleted"
	step "5.$i netdev deleted under rxe1 ($what)"
	settled
done

# --- the end ------------------------------------------------------------------
[ -z "$(rdma link show)" ] || fail "links left: $(rdma link show)"
[ -z "$(rdma resource show 2>/dev/null)" ] || fail "resources left: $(rdma resource show)"
[ "$(refcnt)" = "$rr_before" ] || fail "rdma_rxe refcnt $(refcnt), was $rr_before"
v=$(grep -c '\[rdma_rxe\]' /proc/vmallocinfo)
[ "$v" = 0 ] || fail "$v vmalloc areas of rdma_rxe left: $(grep '\[rdma_rxe\]' /proc/vmallocinfo | head -3)"
echo "slab (unreclaimable) $slab0 kB before, $(slab_kb) kB after (KASAN's quarantine holds freed objects)"
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	leaks=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
	rdma_leaks=$(awk '/unreferenced object/ { n++; hit = 0 } /rxe|ib_|rdma|uverbs/ && !hit { hit = 1; c++ } END { print c + 0 }' /sys/kernel/debug/kmemleak)
	echo "kmemleak: $leaks suspected leaks, $rdma_leaks with an RDMA frame"
	[ "$rdma_leaks" = 0 ] || { cat /sys/kernel/debug/kmemleak; fail "kmemleak"; }
fi
add rxe0 eth0
wait_gid rxe0 "$MYIP" || fail "no GID after all"
step "done: $CYCLES cycles, $K of each other step"
