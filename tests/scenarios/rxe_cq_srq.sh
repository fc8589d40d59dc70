# Completion queues and shared receive queues through the unmodified rxe
# provider (tests/scenarios/rxe_cq_srq.c): create, map, resize and remap,
# poll and post through the mapping, limits and their errnos, destroy, and
# objects left to the process exit. Both guests run it on their own.
# timeout: 240
gcc -O1 -Wall -o ./rxe_cq_srq "$RRXE_REPO/tests/scenarios/rxe_cq_srq.c" -libverbs ||
	{ echo "cannot build the check"; exit 4; }
./rxe_cq_srq
