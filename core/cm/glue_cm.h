/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IB connection manager's C glue: one-line forwards of static inlines
 * of the RDMA core the Rust ib_cm needs, and its sysfs counter attributes
 * (C attribute tables, as the C module has). All logic is in Rust.
 */
#ifndef RRXE_GLUE_CM_H
#define RRXE_GLUE_CM_H

#include <linux/types.h>

struct ib_device;
struct ib_client;

/* rdma_cap_ib_cm(): the port speaks the IB CM protocol (IB and RoCE). */
bool rrxe_cm_cap_ib_cm(const struct ib_device *device, u32 port_num);
/* rdma_start_port() / rdma_end_port(): the range of rdma_for_each_port(). */
u32 rrxe_cm_start_port(const struct ib_device *device);
u32 rrxe_cm_end_port(const struct ib_device *device);
/* ib_get_client_data() */
void *rrxe_cm_get_client_data(struct ib_device *device, struct ib_client *client);

/*
 * The port's counter directories cm_tx_msgs, cm_tx_retries, cm_rx_msgs and
 * cm_rx_duplicates, a file per CM message in each (ib_port_register_client_groups()).
 */
int rrxe_cm_add_counters(struct ib_device *device, u32 port_num);
void rrxe_cm_remove_counters(struct ib_device *device, u32 port_num);

/* Implemented in Rust: the value of counter `index` of directory `group`. */
long rrxe_cm_counter(struct ib_device *device, u32 port_num, unsigned int group,
		     unsigned int index);

#endif /* RRXE_GLUE_CM_H */
