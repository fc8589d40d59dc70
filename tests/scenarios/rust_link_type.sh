# This project's rdma_rxe registers the "rxe" link type and is autoloaded
# through its rdma-link-rxe alias by `rdma link add`, which creates the
# device; the refusals answer the C driver's errnos and create nothing.
modprobe -r rdma_rxe 2>/dev/null
grep -q '^rdma_rxe ' /proc/modules && { echo "rdma_rxe still loaded"; exit 1; }
modprobe ib_uverbs
out=$(rdma link add rxe0 type rxe netdev eth0 2>&1) || { echo "rdma link add failed: $out"; exit 1; }
grep -q '^rdma_rxe ' /proc/modules || { echo "rdma_rxe was not autoloaded via rdma-link-rxe"; exit 1; }
[ "$(ls /sys/class/infiniband)" = rxe0 ] || { echo "devices: $(ls /sys/class/infiniband)"; exit 1; }
rdma link show rxe0/1 | grep -q 'netdev eth0' || { echo "rxe0 is not bound to eth0"; exit 1; }
refused() { # ERRTEXT ARGS...
	local want=$1 out
	shift
	out=$(rdma link add "$@" 2>&1) && { echo "rdma link add $* succeeded"; exit 1; }
	echo "rdma link add $*: $out"
	echo "$out" | grep -q "$want" || { echo "expected '$want'"; exit 1; }
	[ "$(ls /sys/class/infiniband)" = rxe0 ] || { echo "devices: $(ls /sys/class/infiniband)"; exit 1; }
}
refused 'File exists' rxe1 type rxe netdev eth0
ip link add link eth0 name eth0.7 type vlan id 7
refused 'Operation not permitted' rxe1 type rxe netdev eth0.7
ip link del eth0.7
refused 'No such device' rxe1 type rxe netdev nosuch0
# The core answers EINVAL for an unknown link type.
refused 'Invalid argument' rxe1 type nosuchtype netdev eth0
rdma link delete rxe0 || { echo "rdma link delete failed"; exit 1; }
[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] || { echo "a device is left: $(ls /sys/class/infiniband)"; exit 1; }
[ -z "$(rdma link show)" ] || { echo "rdma link show is not empty"; exit 1; }
modprobe -r rdma_rxe || { echo "rdma_rxe does not unload"; exit 1; }
echo ok
