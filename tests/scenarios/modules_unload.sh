# At the end of a run: delete every RDMA link and unload the RDMA modules;
# nothing may stay loaded or complain (the kernel log is checked after this,
# and kmemleak scans once everything is gone).
for l in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1 | sort -u); do
	rdma link delete "$l" || echo "could not delete link $l"
done
modprobe -r rdma_ucm rdma_rxe || { echo "modprobe -r rdma_ucm rdma_rxe failed"; exit 1; }
modprobe -r rdma_cm ib_uverbs ib_umad ib_cm iw_cm ib_core 2>/dev/null
left=$(grep -E '^(rdma_rxe|rdma_ucm) ' /proc/modules)
[ -z "$left" ] || { echo "still loaded: $left"; exit 1; }
echo ok
