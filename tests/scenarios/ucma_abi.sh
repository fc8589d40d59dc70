# The rdma_cm ABI driven directly (tests/scenarios/ucma_abi.py): errnos of
# bad input, abi_version, resolution events, poll, release with IDs pending.
# Both guests run it on their own.
wait_gid rxe0 "$MYIP" || exit 1
python3 "$RRXE_REPO/tests/scenarios/ucma_abi.py" "$MYIP" "$PEERIP"
