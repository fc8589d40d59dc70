# The kernel's rxe_netns_names.sh selftest alone (see kselftest_rdma): RDMA
# device names across network namespaces, which needs moving the device to
# another namespace (`rdma dev set DEV netns NS`). The RDMA core allows that
# only for drivers with disassociate_ucontext, which this project's rdma_rxe
# does not have yet (Documentation/differences.rst): tests/xfail lists it for
# the rust set.
# timeout: 900
RRXE_KSFT=rxe_netns_names
. "$RRXE_REPO/tests/scenarios/kselftest_rdma.sh"
