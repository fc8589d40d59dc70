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

/* ib_safe_file_access(): the writer of a command file must be its opener. */
bool rrxe_safe_file_access(struct file *filp);

/* poll_wait() for a Rust poll handler. */
void rrxe_poll_wait(struct file *filp, wait_queue_head_t *wq, poll_table *p);

/* struct net_device is opaque to Rust: its layout is large and config-dependent. */
const char *rrxe_netdev_name(const struct net_device *ndev);
unsigned short rrxe_netdev_type(const struct net_device *ndev);

/* is_vlan_dev() */
bool rrxe_netdev_is_vlan(const struct net_device *ndev);

#endif /* RRXE_GLUE_H */
