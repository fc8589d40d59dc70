# Local operations (BIND_MW of a type 2 window through the send queue,
# ibv_bind_mw of a type 1 window, LOCAL_INV), ATOMIC WRITE, FLUSH and an RDMA
# WRITE WITH IMMEDIATE (its receive completion's length and immediate) between
# the guests, each way (tests/scenarios/rxe_local_ops.c): data compared
# through the windows, a remote access error after the invalidation and for
# a FLUSH of a region registered without IBV_ACCESS_FLUSH_GLOBAL.
# timeout: 150
idx=$(rxe0_gid_index) || exit 1
# tests/run builds the program on the host; a run started by hand without
# that builds it here (slow under KASAN).
bin=$(scenario_program rxe_local_ops) || exit 1

rc=0
for server in a b; do
	if [ "$ROLE" = "$server" ]; then
		timeout 50 "$bin" rxe0 "$idx" server "$PEERIP" || rc=1
	else
		timeout 50 "$bin" rxe0 "$idx" client "$PEERIP" || rc=1
	fi
	barrier "localops.$server" 60 || rc=1
done
exit $rc
