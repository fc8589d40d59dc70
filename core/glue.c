// SPDX-License-Identifier: GPL-2.0
/*
 * C glue shared by the project's modules (see glue.h). Not compiled on its
 * own: each module's <module>_glue.c includes it, so each .ko carries its own
 * copy under its own object name.
 */
#include <linux/if_vlan.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/wait_bit.h>
#include <uapi/linux/sched/types.h>
#include <rdma/ib.h>
#include <rdma/ib_addr.h>
#include <rdma/rdma_user_cm.h>
#include <linux/device.h>
#include <linux/sysfs.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

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

struct workqueue_struct *rrxe_alloc_workqueue(const char *name, unsigned int flags,
					      int max_active)
{
	return alloc_workqueue("%s", flags, max_active, name);
}

struct kthread_worker *rrxe_kthread_worker_create(const char *name, unsigned int id,
						  u64 slice_ns)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_NORMAL,
		.sched_nice = 0,
		.sched_runtime = slice_ns,
	};
	struct kthread_worker *worker;
	int err;

	worker = kthread_run_worker(0, "%s/%u", name, id);
	if (IS_ERR(worker) || !slice_ns)
		return worker;
	err = sched_setattr_nocheck(worker->task, &attr);
	if (err) {
		kthread_destroy_worker(worker);
		return ERR_PTR(err);
	}
	return worker;
}

unsigned int rrxe_num_online_cpus(void)
{
	return num_online_cpus();
}

void rrxe_kthread_init_work(struct kthread_work *work, void (*fn)(struct kthread_work *))
{
	kthread_init_work(work, fn);
}

void rrxe_wait_var_while_u8(u8 *var, u8 val)
{
	wait_var_event(var, smp_load_acquire(var) != val);
}

void rrxe_wake_up_var_mb(void *var)
{
	smp_mb();
	wake_up_var(var);
}

void rrxe_set_and_wake_var_u8(u8 *var, u8 val)
{
	/*
	 * Release: what the caller did before is done when a waiter sees val.
	 * wake_up_var() uses the address only, as the waiters' key.
	 */
	smp_store_release(var, val);
	smp_mb();
	wake_up_var(var);
}

void rrxe_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

void rrxe_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

int rrxe_spin_trylock_bh(spinlock_t *lock)
{
	return spin_trylock_bh(lock);
}

bool rrxe_in_serving_softirq(void)
{
	return in_serving_softirq();
}

bool rrxe_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

void rrxe_addr_get_sgid(struct rdma_dev_addr *dev_addr, union ib_gid *gid)
{
	rdma_addr_get_sgid(dev_addr, gid);
}

void rrxe_addr_get_dgid(struct rdma_dev_addr *dev_addr, union ib_gid *gid)
{
	rdma_addr_get_dgid(dev_addr, gid);
}

u16 rrxe_addr_get_pkey(struct rdma_dev_addr *dev_addr)
{
	return ib_addr_get_pkey(dev_addr);
}

int rrxe_ip2gid(struct sockaddr *addr, union ib_gid *gid)
{
	return rdma_ip2gid(addr, gid);
}

bool rrxe_cap_ib_sa(const struct ib_device *device, u32 port_num)
{
	return rdma_cap_ib_sa(device, port_num);
}

bool rrxe_protocol_roce(const struct ib_device *device, u32 port_num)
{
	return rdma_protocol_roce(device, port_num);
}

bool rrxe_protocol_iwarp(const struct ib_device *device, u32 port_num)
{
	return rdma_protocol_iwarp(device, port_num);
}

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", RDMA_USER_CM_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

int rrxe_ucma_abi_attr_create(struct device *dev)
{
	return device_create_file(dev, &dev_attr_abi_version);
}

void rrxe_ucma_abi_attr_remove(struct device *dev)
{
	device_remove_file(dev, &dev_attr_abi_version);
}

static unsigned int rrxe_ucma_max_backlog_val = 1024;
static struct ctl_table rrxe_ucma_ctl_table[] = {
	{
		.procname	= "max_backlog",
		.data		= &rrxe_ucma_max_backlog_val,
		.maxlen		= sizeof(rrxe_ucma_max_backlog_val),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_INT_MAX,
	},
};

void *rrxe_ucma_sysctl_register(void)
{
	return register_net_sysctl(&init_net, "net/rdma_ucm", rrxe_ucma_ctl_table);
}

void rrxe_ucma_sysctl_unregister(void *hdr)
{
	unregister_net_sysctl_table(hdr);
}

unsigned int rrxe_ucma_max_backlog(void)
{
	return READ_ONCE(rrxe_ucma_max_backlog_val);
}
