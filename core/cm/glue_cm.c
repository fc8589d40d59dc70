// SPDX-License-Identifier: GPL-2.0
/* See glue_cm.h. */
#include <rdma/ib_verbs.h>
#include "glue_cm.h"

bool rrxe_cm_cap_ib_cm(const struct ib_device *device, u32 port_num)
{
	return rdma_cap_ib_cm(device, port_num);
}

u32 rrxe_cm_start_port(const struct ib_device *device)
{
	return rdma_start_port(device);
}

u32 rrxe_cm_end_port(const struct ib_device *device)
{
	return rdma_end_port(device);
}
