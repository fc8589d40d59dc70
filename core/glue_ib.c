// SPDX-License-Identifier: GPL-2.0
/*
 * C glue for RDMA devices (see glue_ib.h). Not compiled on its own: a
 * module's <module>_glue.c includes it.
 */
#include <linux/cpumask.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/sysfs.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "glue_ib.h"

struct ib_device *rrxe_ib_alloc_device(void)
{
	struct rrxe_ib_device *dev = ib_alloc_device(rrxe_ib_device, ib_dev);

	return dev ? &dev->ib_dev : NULL;
}

void *rrxe_ib_drv(const struct ib_device *ibdev)
{
	return container_of(ibdev, struct rrxe_ib_device, ib_dev)->drv;
}

void rrxe_ib_set_drv(struct ib_device *ibdev, void *drv)
{
	container_of(ibdev, struct rrxe_ib_device, ib_dev)->drv = drv;
}

void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}

int rrxe_ib_no_udata_io(struct ib_udata *udata)
{
	return ib_no_udata_io(udata);
}

unsigned int rrxe_num_possible_cpus(void)
{
	return num_possible_cpus();
}

static ssize_t parent_show(struct device *device, struct device_attribute *attr,
			   char *buf)
{
	struct net_device *ndev = ib_device_get_netdev(rdma_device_to_ibdev(device), 1);
	ssize_t ret;

	if (!ndev)
		return -ENODEV;
	ret = sysfs_emit(buf, "%s\n", ndev->name);
	dev_put(ndev);
	return ret;
}
static DEVICE_ATTR_RO(parent);

static struct attribute *rrxe_ib_parent_attrs[] = {
	&dev_attr_parent.attr,
	NULL
};

const struct attribute_group rrxe_ib_parent_group = {
	.attrs = rrxe_ib_parent_attrs,
};

unsigned int rrxe_netdev_mtu(const struct net_device *ndev)
{
	return READ_ONCE(ndev->mtu);
}

unsigned int rrxe_netdev_hw_addr(const struct net_device *ndev, u8 *buf, unsigned int len)
{
	unsigned int n = min_t(unsigned int, ndev->addr_len, len);

	memcpy(buf, ndev->dev_addr, n);
	return ndev->addr_len;
}

/* Whether @mac (6 bytes) is the netdev's Ethernet address: the loopback
 * test of every packet sent, without a copy of the address. */
bool rrxe_netdev_has_mac(const struct net_device *ndev, const u8 *mac)
{
	return ndev->addr_len == ETH_ALEN && ether_addr_equal(ndev->dev_addr, mac);
}

bool rrxe_netdev_port_active(struct net_device *ndev)
{
	return ib_get_curr_port_state(ndev) == IB_PORT_ACTIVE;
}

bool rrxe_netdev_admin_up(const struct net_device *ndev)
{
	return READ_ONCE(ndev->flags) & IFF_UP;
}

void rrxe_netdev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

struct net_device *rrxe_netdev_notifier_info_to_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

void rrxe_eth_random_addr(u8 *addr)
{
	eth_random_addr(addr);
}

void rrxe_xa_init_alloc(struct xarray *xa)
{
	xa_init_flags(xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
}

int rrxe_xa_alloc_cyclic(struct xarray *xa, u32 *id, u32 min, u32 max, u32 *next, gfp_t gfp)
{
	return xa_alloc_cyclic_irq(xa, id, NULL, XA_LIMIT(min, max), next, gfp);
}

void *rrxe_xa_store(struct xarray *xa, unsigned long index, void *entry, gfp_t gfp)
{
	return xa_store_irq(xa, index, entry, gfp);
}

void *rrxe_xa_erase(struct xarray *xa, unsigned long index)
{
	return xa_erase_irq(xa, index);
}

unsigned long rrxe_xa_lock(struct xarray *xa)
{
	unsigned long flags;

	xa_lock_irqsave(xa, flags);
	return flags;
}

void rrxe_xa_unlock(struct xarray *xa, unsigned long flags)
{
	xa_unlock_irqrestore(xa, flags);
}
