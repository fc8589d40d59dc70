// SPDX-License-Identifier: GPL-2.0
/* This module's copy of the shared C glue (see core/glue.h). */
#include "../core/glue.c"
/* The glue only this module needs (netlink client, RDMA_OPTION_IB_PATH). */
#include "../core/glue_ucma.c"
