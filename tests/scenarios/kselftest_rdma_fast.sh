# The quick part of kselftest_rdma for the rust set in CI: the kernel's
# rxe_socket_with_netns.sh and rxe_test_NETDEV_UNREGISTER.sh (the UDP
# socket shared by two devices and closed with the last one; the device
# removed with its netdev). tests/run runs the whole of kselftest_rdma (and
# kselftest_rdma_netns_names) instead with RRXE_LONG=1: each script takes
# one to two minutes on the test kernel under TCG.
# timeout: 600
RRXE_KSFT=${RRXE_KSFT:-rxe_socket_with_netns rxe_test_NETDEV_UNREGISTER}
. "$RRXE_REPO/tests/scenarios/kselftest_rdma.sh"
