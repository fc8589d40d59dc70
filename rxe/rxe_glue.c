// SPDX-License-Identifier: GPL-2.0
/* This module's copy of the shared C glue (see core/glue.h). */
#include "../core/glue.c"
/* The RDMA device glue, only this module needs it. */
#include "../core/glue_ib.c"
/* The queues shared with user space, only this module needs them. */
#include "../core/glue_queue.c"
#include "../core/glue_qp.c"
#include "../core/glue_mr.c"
#include "../core/glue_data.c"
#include "../core/glue_net.c"
#include "../core/glue_gsi.c"
