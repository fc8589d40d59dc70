// SPDX-License-Identifier: GPL-2.0
/*
 * C glue for queue pairs (see glue_qp.h). Not compiled on its own: the rxe
 * module's rxe_glue.c includes it.
 */
#include <rdma/ib_verbs.h>

#include "glue_qp.h"

void rrxe_ibdev_err_ratelimited(const struct ib_device *dev, const char *msg)
{
	ibdev_err_ratelimited(dev, "%s\n", msg);
}
