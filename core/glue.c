// SPDX-License-Identifier: GPL-2.0
/*
 * C glue shared by the project's modules (see glue.h). Not compiled on its
 * own: each module's <module>_glue.c includes it, so each .ko carries its own
 * copy under its own object name.
 */
#include <linux/if_vlan.h>
#include <rdma/ib.h>

#include "glue.h"

bool rrxe_safe_file_access(struct file *filp)
{
	return ib_safe_file_access(filp);
}

void rrxe_poll_wait(struct file *filp, wait_queue_head_t *wq, poll_table *p)
{
	poll_wait(filp, wq, p);
}

const char *rrxe_netdev_name(const struct net_device *ndev)
{
	return ndev->name;
}

unsigned short rrxe_netdev_type(const struct net_device *ndev)
{
	return ndev->type;
}

bool rrxe_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}
