/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C glue shared by the project's modules: wrappers for the kernel's
 * static inline functions and macros that Rust cannot call directly. Every
 * function here is a one-line forward; all logic is in Rust.
 */
#ifndef RRXE_GLUE_H
#define RRXE_GLUE_H

#include <linux/fs.h>
#include <linux/netdevice.h>
#include <linux/poll.h>
#include <linux/workqueue.h>

/* ib_safe_file_access(): the writer of a command file must be its opener. */
bool rrxe_safe_file_access(struct file *filp);

/* poll_wait() for a Rust poll handler. */
void rrxe_poll_wait(struct file *filp, wait_queue_head_t *wq, poll_table *p);

/* struct net_device is opaque to Rust: its layout is large and config-dependent. */
const char *rrxe_netdev_name(const struct net_device *ndev);
unsigned short rrxe_netdev_type(const struct net_device *ndev);

/* alloc_workqueue() is a macro (allocation profiling hooks). */
struct workqueue_struct *rrxe_alloc_workqueue(const char *name, unsigned int flags,
					      int max_active);

/*
 * A kthread_worker of its own (kthread_run_worker() is a macro) whose
 * thread, of normal policy and nice 0, asks for a scheduler slice of
 * slice_ns (sched_attr.sched_runtime; 0: the default); an ERR_PTR on error.
 */
struct kthread_worker;
struct kthread_work;
struct kthread_worker *rrxe_kthread_worker_create(const char *name, unsigned int id,
						  u64 slice_ns);
/* num_online_cpus() is a static inline. */
unsigned int rrxe_num_online_cpus(void);
/* kthread_init_work() is a macro. */
void rrxe_kthread_init_work(struct kthread_work *work, void (*fn)(struct kthread_work *));

/*
 * wait_var_event() (a macro) until *var is no longer val (read with
 * acquire), and the wake_up_var() that ends it, after the full barrier its
 * lockless check of the waiters needs (see wake_up_var()'s comment).
 */
void rrxe_wait_var_while_u8(u8 *var, u8 val);
void rrxe_wake_up_var_mb(void *var);
/*
 * Stores val in *var (with release) and wakes its waiters, without touching
 * *var after the store: a waiter that sees the value may free it at once.
 */
void rrxe_set_and_wake_var_u8(u8 *var, u8 val);

/*
 * spin_lock_bh() and its kin are macros or static inlines: for a lock taken
 * both in softirq context and in process context (core/rdma/bh_lock.rs).
 */
void rrxe_spin_lock_bh(spinlock_t *lock);
void rrxe_spin_unlock_bh(spinlock_t *lock);
int rrxe_spin_trylock_bh(spinlock_t *lock);
/* in_serving_softirq(): a softirq handler (NAPI's receive) runs now. */
bool rrxe_in_serving_softirq(void);

/* is_vlan_dev() */
bool rrxe_netdev_is_vlan(const struct net_device *ndev);


/* RDMA CM helpers for the ucma (static inlines of ib_addr.h / ib_verbs.h). */
struct rdma_dev_addr;
union ib_gid;
struct ib_device;
struct sockaddr;
struct device;

void rrxe_addr_get_sgid(struct rdma_dev_addr *dev_addr, union ib_gid *gid);
void rrxe_addr_get_dgid(struct rdma_dev_addr *dev_addr, union ib_gid *gid);
u16 rrxe_addr_get_pkey(struct rdma_dev_addr *dev_addr);
int rrxe_ip2gid(struct sockaddr *addr, union ib_gid *gid);
bool rrxe_cap_ib_sa(const struct ib_device *device, u32 port_num);
bool rrxe_protocol_roce(const struct ib_device *device, u32 port_num);
bool rrxe_protocol_iwarp(const struct ib_device *device, u32 port_num);

/* The misc device's read-only "abi_version" attribute (RDMA_USER_CM_ABI_VERSION). */
int rrxe_ucma_abi_attr_create(struct device *dev);
void rrxe_ucma_abi_attr_remove(struct device *dev);

/* The ucma's sysctl net.rdma_ucm.max_backlog (default 1024, as the C module). */
void *rrxe_ucma_sysctl_register(void);
void rrxe_ucma_sysctl_unregister(void *hdr);
unsigned int rrxe_ucma_max_backlog(void);

#endif /* RRXE_GLUE_H */
