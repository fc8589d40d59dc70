# rdma link delete while rdma_cm ids that nobody attends to sit on the
# device (tests/scenarios/ucma_removal.py), then the device is added
# again for the scenarios after this one. Both guests, each on its own rxe0.
# timeout: 240
wait_gid rxe0 "$MYIP" || exit 1
python3 "$RRXE_REPO/tests/scenarios/ucma_removal.py" "$MYIP" "$PEERIP" rxe0
rc=$?
rdma link show rxe0 >/dev/null 2>&1 || rdma link add rxe0 type rxe netdev eth0 || rc=1
wait_gid rxe0 "$MYIP" || rc=1
exit $rc
