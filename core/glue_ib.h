/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for RDMA devices (the rxe device model): the ib_alloc_device()
 * macro, static inlines of ib_verbs.h, uverbs_ioctl.h and netdevice.h, and
 * fields of struct net_device (opaque to Rust). One-line forwards, except
 * the device's sysfs "parent" attribute, which is a C attribute group.
 */
#ifndef RRXE_GLUE_IB_H
#define RRXE_GLUE_IB_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

/*
 * The device as this project allocates it: the ib_device first (the RDMA
 * core requires it at offset 0), then the driver's own state, a pointer the
 * Rust side owns (set once after allocation, freed in dealloc_driver).
 */
struct rrxe_ib_device {
	struct ib_device ib_dev;
	void *drv;
};

struct ib_device *rrxe_ib_alloc_device(void);
void *rrxe_ib_drv(const struct ib_device *ibdev);
void rrxe_ib_set_drv(struct ib_device *ibdev, void *drv);
void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev);
int rrxe_ib_no_udata_io(struct ib_udata *udata);
unsigned int rrxe_num_possible_cpus(void);

/* The sysfs group with "parent": the name of the netdev bound to port 1. */
extern const struct attribute_group rrxe_ib_parent_group;

/* struct net_device fields and inlines. */
unsigned int rrxe_netdev_mtu(const struct net_device *ndev);
/* Copies up to @len bytes of the hardware address; returns its length. */
unsigned int rrxe_netdev_hw_addr(const struct net_device *ndev, u8 *buf, unsigned int len);
bool rrxe_netdev_has_mac(const struct net_device *ndev, const u8 *mac);
/* ib_get_curr_port_state(): running with carrier. */
bool rrxe_netdev_port_active(struct net_device *ndev);
bool rrxe_netdev_admin_up(const struct net_device *ndev);
void rrxe_netdev_put(struct net_device *ndev);
void rrxe_eth_random_addr(u8 *addr);
struct net_device *rrxe_netdev_notifier_info_to_dev(void *info);

/*
 * Object pools (core/rdma/pool.rs): an allocating xarray whose lock is taken
 * with interrupts disabled, since the receive path looks objects up from
 * softirq context. xa_alloc_cyclic() with a NULL entry reserves an index;
 * the object is stored once it is complete.
 */
void rrxe_xa_init_alloc(struct xarray *xa);
int rrxe_xa_alloc_cyclic(struct xarray *xa, u32 *id, u32 min, u32 max, u32 *next, gfp_t gfp);
void *rrxe_xa_store(struct xarray *xa, unsigned long index, void *entry, gfp_t gfp);
void *rrxe_xa_erase(struct xarray *xa, unsigned long index);
/* xa_lock_irqsave(): returns the flags for rrxe_xa_unlock(). */
unsigned long rrxe_xa_lock(struct xarray *xa);
void rrxe_xa_unlock(struct xarray *xa, unsigned long flags);

#endif /* RRXE_GLUE_IB_H */
