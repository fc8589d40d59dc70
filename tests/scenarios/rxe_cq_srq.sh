# Completion queues and shared receive queues through the unmodified rxe
# provider (tests/scenarios/rxe_cq_srq.c): create, map, resize and remap,
# poll and post through the mapping, limits and their errnos, destroy, and
# objects left to the process exit. Both guests run it on their own.
# timeout: 240
bin=$(scenario_program rxe_cq_srq) || exit
"$bin"
