# rdma link add rxe0 type rxe netdev eth0 creates a device bound to eth0 whose
# port goes ACTIVE and gets the IPv4-mapped RoCE v2 GID of eth0's address.
set -e
modprobe ib_uverbs
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev eth0
rdma link show
rdma link show rxe0/1 | grep -q 'netdev eth0' || { echo "rxe0 is not bound to eth0"; exit 1; }
ibv_devices | grep -q rxe0 || { echo "ibv_devices does not list rxe0"; exit 1; }
wait_gid rxe0 "$MYIP"
for i in $(seq 50); do
	grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && break
	sleep 0.2
done
cat /sys/class/infiniband/rxe0/ports/1/state
grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state
echo "RoCE v2 IPv4 GID index $(gid_index_v4 rxe0 "$MYIP")"
