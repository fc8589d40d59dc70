/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IB connection manager's C glue: one-line forwards of static inlines
 * of the RDMA core the Rust ib_cm needs. All logic is in Rust.
 */
#ifndef RRXE_GLUE_CM_H
#define RRXE_GLUE_CM_H

#include <linux/types.h>

struct ib_device;

/* rdma_cap_ib_cm(): the port speaks the IB CM protocol (IB and RoCE). */
bool rrxe_cm_cap_ib_cm(const struct ib_device *device, u32 port_num);
/* rdma_start_port() / rdma_end_port(): the range of rdma_for_each_port(). */
u32 rrxe_cm_start_port(const struct ib_device *device);
u32 rrxe_cm_end_port(const struct ib_device *device);

#endif /* RRXE_GLUE_CM_H */
