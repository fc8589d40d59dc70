# The kernel's own rxe selftests (tools/testing/selftests/rdma/rxe_*.sh), in
# guest a only (they build their own namespaces and veths). They unload
# rdma_rxe, so this runs last. Under TCG with KASAN and lockdep each script
# takes minutes (rxe_netns_names.sh most of all).
# timeout: 2400
[ "$ROLE" = a ] || { echo "runs in guest a only"; exit 0; }
dir=$KSRC/tools/testing/selftests/rdma
rc=0
for t in "$dir"/rxe_*.sh; do
	name=${t##*/}
	timeout 900 bash "$t" >"/tmp/$name.out" 2>&1
	r=$?
	case $r in
	0) echo "ok $name" ;;
	4) echo "skip $name: $(tail -n1 /tmp/$name.out)" ;;
	*) echo "not ok $name (exit $r)"; cat "/tmp/$name.out"; rc=1 ;;
	esac
done
exit $rc
