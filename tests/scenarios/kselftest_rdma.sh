# The kernel's own rxe selftests (tools/testing/selftests/rdma/rxe_*.sh), in
# guest a only (they build their own namespaces, veths and tun devices). They
# unload rdma_rxe, so this runs last. Under TCG with KASAN and lockdep each
# script takes minutes on the C modules (rxe_netns_names.sh most of all).
# RRXE_KSFT="rxe_ipv6 ..." runs only those scripts.
#
# With this project's rdma_rxe (MYSET=rust) two documented differences
# (Documentation/differences.rst) change the run:
# - a tun device is refused (not Ethernet): the scripts that bind rxe to a
#   tun device run on a copy with a dummy (Ethernet) device in its place,
#   which is what they test (UDP socket per namespace, byte counters,
#   NETDEV_UNREGISTER), not tun;
# - no disassociate_ucontext, so the RDMA core refuses moving the device to
#   another namespace (EOPNOTSUPP): rxe_netns_names.sh runs in its own
#   scenario, kselftest_rdma_netns_names (listed in tests/xfail).
# timeout: 2400
[ "$ROLE" = a ] || { echo "runs in guest a only"; exit 0; }
src=$KSRC/tools/testing/selftests
dir=$src/rdma
if [ "$MYSET" = rust ]; then
	# The copies find ../kselftest/ktap_helpers.sh as the originals do.
	dir=/tmp/ksft/rdma
	mkdir -p "$dir"
	ln -sfn "$src/kselftest" /tmp/ksft/kselftest
	for t in "$src"/rdma/rxe_*.sh; do
		sed 's/ip tuntap add mode tun \([^ ]*\)/ip link add \1 type dummy/' "$t" >"$dir/${t##*/}"
		cmp -s "$t" "$dir/${t##*/}" || echo "${t##*/}: tun device replaced by a dummy one (a tun device is refused)"
	done
	if [ -z "${RRXE_KSFT:-}" ]; then
		RRXE_KSFT="rxe_ipv6 rxe_rping_between_netns rxe_sent_rcvd_bytes rxe_socket_with_netns rxe_test_NETDEV_UNREGISTER"
		echo "rxe_netns_names.sh: in scenario kselftest_rdma_netns_names (moving the device to another namespace needs disassociate_ucontext)"
	fi
fi
rc=0
for t in "$dir"/rxe_*.sh; do
	name=${t##*/}
	if [ -n "${RRXE_KSFT:-}" ] && [[ " $RRXE_KSFT " != *" ${name%.sh} "* ]]; then
		continue
	fi
	start=$SECONDS
	timeout 900 bash "$t" >"/tmp/$name.out" 2>&1
	r=$?
	took="$((SECONDS - start)) s"
	case $r in
	0) echo "ok $name ($took)" ;;
	4) echo "skip $name ($took): $(tail -n1 "/tmp/$name.out")" ;;
	*) echo "not ok $name (exit $r, $took)"; cat "/tmp/$name.out"; rc=1 ;;
	esac
done
exit $rc
