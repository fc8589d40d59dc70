# Device limits (tests/scenarios/rxe_limits.c, part "objects"), each guest
# on its own device looped back to itself: max_ah address handles and one
# more, max_mcast_qp_attach QPs in a group and one more (the errno of the
# one beyond, everything reusable after), QP capabilities and work requests
# one beyond their maxima, a zero-length UD send. Afterwards the device
# holds no more objects than before. The same results are expected from the
# C driver (set c). rxe_cq_overflow runs the program's transport part.
# timeout: 180
idx=$(rxe0_gid_index) || exit 1
bin=$(scenario_program rxe_limits) || exit
before=$(rdma resource show rxe0)
echo "before: $before"
start=$(date +%s)
"$bin" rxe0 "$idx" "${LIMITS_PART:-objects}" 2>&1 | tee limits.out
rc=${PIPESTATUS[0]}
echo "took $(($(date +%s) - start)) s"
# The process is gone: the RDMA core destroyed what it left.
after=$(rdma resource show rxe0)
echo "after:  $after"
[ "$before" = "$after" ] || { echo "objects left behind"; exit 1; }
# A set-up step of verbs_common.h that failed prints no FAIL line: its last.
[ $rc = 0 ] || echo "$(grep -c '^FAIL' limits.out) check(s) failed, the first: $(grep -m1 '^FAIL' limits.out ||
	echo "none, it stopped at: $(tail -n1 limits.out)")"
exit $rc
