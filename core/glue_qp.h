/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for queue pairs (core/rdma/qp.rs): the rate-limited device error
 * message macro the C driver prints refusals with.
 */
#ifndef RRXE_GLUE_QP_H
#define RRXE_GLUE_QP_H

#include <rdma/ib_verbs.h>

/* ibdev_err_ratelimited(dev, "%s\n", msg). */
void rrxe_ibdev_err_ratelimited(const struct ib_device *dev, const char *msg);

#endif /* RRXE_GLUE_QP_H */
