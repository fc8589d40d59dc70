# This project's rdma_rxe registers the "rxe" link type and is autoloaded
# through its rdma-link-rxe alias; until device creation lands, `rdma link
# add` is refused with EOPNOTSUPP and nothing is created.
modprobe -r rdma_rxe 2>/dev/null
grep -q '^rdma_rxe ' /proc/modules && { echo "rdma_rxe still loaded"; exit 1; }
out=$(rdma link add rxe0 type rxe netdev eth0 2>&1); rc=$?
echo "rdma link add: exit $rc: $out"
[ $rc != 0 ] || { echo "link add unexpectedly succeeded"; exit 1; }
grep -q '^rdma_rxe ' /proc/modules || { echo "rdma_rxe was not autoloaded via rdma-link-rxe"; exit 1; }
# EOPNOTSUPP comes from our newlink: the core answers EINVAL for unknown types.
echo "$out" | grep -q 'Operation not supported' || { echo "expected EOPNOTSUPP from rxe newlink"; exit 1; }
[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] || { echo "a device was created: $(ls /sys/class/infiniband)"; exit 1; }
[ -z "$(rdma link show)" ] || { echo "rdma link show is not empty"; exit 1; }
out=$(rdma link add rxe0 type rxe netdev nosuch0 2>&1) && { echo "link add on a missing netdev succeeded"; exit 1; }
echo "missing netdev: $out"
out=$(rdma link add rxe0 type nosuchtype netdev eth0 2>&1) && { echo "unknown link type accepted"; exit 1; }
echo "unknown type: $out"
modprobe -r rdma_rxe || { echo "rdma_rxe does not unload"; exit 1; }
echo ok
