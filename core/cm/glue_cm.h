/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IB connection manager's C glue: one-line forwards of static inlines
 * of the RDMA core the Rust ib_cm needs, and its sysfs counter attributes
 * (C attribute tables, as the C module has). All logic is in Rust.
 */
#ifndef RRXE_GLUE_CM_H
#define RRXE_GLUE_CM_H

#include <linux/types.h>
#include <rdma/ib_cm.h>

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

/* sa_conv_gid_to_pathrec_type(): the path record type of a GID type. */
int rrxe_cm_pathrec_type(int gid_type);

/*
 * The exported IB CM API (include/rdma/ib_cm.h) is implemented in Rust under
 * these names; glue_cm.c exports thin wrappers with the API's names.
 */
struct ib_cm_id *rrxe_cm_create_id(struct ib_device *device, ib_cm_handler cm_handler,
				   void *context);
void rrxe_cm_destroy_id(struct ib_cm_id *cm_id);
int rrxe_cm_listen(struct ib_cm_id *cm_id, __be64 service_id);
struct ib_cm_id *rrxe_cm_insert_listen(struct ib_device *device, ib_cm_handler cm_handler,
				       __be64 service_id);
int rrxe_cm_send_req(struct ib_cm_id *cm_id, struct ib_cm_req_param *param);
int rrxe_cm_send_rep(struct ib_cm_id *cm_id, struct ib_cm_rep_param *param);
int rrxe_cm_send_rtu(struct ib_cm_id *cm_id, const void *private_data, u8 private_data_len);
int rrxe_cm_send_dreq(struct ib_cm_id *cm_id, const void *private_data, u8 private_data_len);
int rrxe_cm_send_drep(struct ib_cm_id *cm_id, const void *private_data, u8 private_data_len);
int rrxe_cm_notify(struct ib_cm_id *cm_id, enum ib_event_type event);
int rrxe_cm_send_rej(struct ib_cm_id *cm_id, enum ib_cm_rej_reason reason, void *ari,
		     u8 ari_length, const void *private_data, u8 private_data_len);
int rrxe_cm_prepare_mra(struct ib_cm_id *cm_id);
int rrxe_cm_init_qp_attr(struct ib_cm_id *cm_id, struct ib_qp_attr *qp_attr, int *qp_attr_mask);
int rrxe_cm_send_sidr_req(struct ib_cm_id *cm_id, struct ib_cm_sidr_req_param *param);
int rrxe_cm_send_sidr_rep(struct ib_cm_id *cm_id, struct ib_cm_sidr_rep_param *param);
const char *rrxe_cm_reject_msg(int reason);

#endif /* RRXE_GLUE_CM_H */
