# The transport part of tests/scenarios/rxe_limits.c, each guest on its own
# device looped back to itself: a UD send beyond the path MTU (no packet, a
# successful completion, the receive left posted, as C's requester), then
# completion queue overflow: a one-entry send CQ (IBV_EVENT_CQ_ERR, the
# completion that fits intact, the QP stays in RTS as C's completer leaves
# it) and a one-entry receive CQ (IBV_EVENT_CQ_ERR, the QP to the error
# state: C's responder, RESPST_ERR_CQ_OVERFLOW); then an RDMA WRITE between
# two RC QPs through an rkey without remote write (IBV_WC_REM_ACCESS_ERR for
# the writer, IBV_EVENT_QP_ACCESS_ERR and ERR for the target's QP).
# Afterwards the device holds no more objects than before.
# timeout: 180
LIMITS_PART=transport
. "$RRXE_REPO/tests/scenarios/rxe_limits.sh"
