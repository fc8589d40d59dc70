# Load the RDMA modules of this guest's set and check modprobe picked the
# right files: this project's from updates/ for the rust and full sets (and
# ib_cm for cm), the kernel's own for the c set.
set -e
modprobe ib_uverbs
modprobe rdma_rxe
modprobe rdma_ucm
for m in rdma_rxe rdma_ucm; do
	f=$(modinfo -F filename $m)
	echo "$m: $f"
	case $MYSET:$m in
	rust:*|full:*|ucma:rdma_ucm) want=updates ;;
	*) want=kernel ;;
	esac
	[[ $f == */$want/* ]] || { echo "$m is not from $want/ for set $MYSET"; exit 1; }
	grep -q "^$m " /proc/modules || { echo "$m not loaded"; exit 1; }
done
if [ "$MYSET" = cm ] || [ "$MYSET" = full ]; then
	# rdma_cm (loaded with rdma_ucm) runs over this project's ib_cm.
	f=$(modinfo -F filename ib_cm)
	echo "ib_cm: $f"
	[[ $f == */updates/* ]] || { echo "ib_cm is not from updates/ for set $MYSET"; exit 1; }
	grep -q "^ib_cm " /proc/modules || { echo "ib_cm not loaded"; exit 1; }
fi
modinfo rdma_rxe | grep -q 'alias: *rdma-link-rxe' || { echo "rdma_rxe lacks the rdma-link-rxe alias"; exit 1; }
[ -c /dev/infiniband/rdma_cm ] || { echo "/dev/infiniband/rdma_cm missing"; exit 1; }
mode=$(stat -c %a /dev/infiniband/rdma_cm)
[ "$mode" = 666 ] || { echo "/dev/infiniband/rdma_cm has mode $mode, not 666"; exit 1; }
echo ok
