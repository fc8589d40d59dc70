// SPDX-License-Identifier: GPL-2.0
/* See glue_cm.h. */
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sysfs.h>
#include <rdma/ib_sa.h>
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

void *rrxe_cm_get_client_data(struct ib_device *device, struct ib_client *client)
{
	return ib_get_client_data(device, client);
}

/* Exported by ib_core; declared in its private core_priv.h only. */
int ib_port_register_client_groups(struct ib_device *ibdev, u32 port_num,
				   const struct attribute_group **groups);
void ib_port_unregister_client_groups(struct ib_device *ibdev, u32 port_num,
				      const struct attribute_group **groups);

struct rrxe_cm_counter_attr {
	struct ib_port_attribute port_attr;
	unsigned int group;
	unsigned int index;
};

static ssize_t rrxe_cm_counter_show(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_attribute *attr, char *buf)
{
	struct rrxe_cm_counter_attr *c =
		container_of(attr, struct rrxe_cm_counter_attr, port_attr);

	return sysfs_emit(buf, "%ld\n", rrxe_cm_counter(ibdev, port_num, c->group, c->index));
}

/* One read-only file per CM attribute, in attribute ID order (0x10..0x1a). */
#define RRXE_CM_FILE(name, g, i)                                               \
	{ .port_attr = __ATTR(name, 0444, rrxe_cm_counter_show, NULL),         \
	  .group = g, .index = i }
#define RRXE_CM_DIR(g, dir)                                                    \
	static struct rrxe_cm_counter_attr rrxe_cm_files_##g[] = {             \
		RRXE_CM_FILE(req, g, 0),      RRXE_CM_FILE(mra, g, 1),         \
		RRXE_CM_FILE(rej, g, 2),      RRXE_CM_FILE(rep, g, 3),         \
		RRXE_CM_FILE(rtu, g, 4),      RRXE_CM_FILE(dreq, g, 5),        \
		RRXE_CM_FILE(drep, g, 6),     RRXE_CM_FILE(sidr_req, g, 7),    \
		RRXE_CM_FILE(sidr_rep, g, 8), RRXE_CM_FILE(lap, g, 9),         \
		RRXE_CM_FILE(apr, g, 10),                                      \
	};                                                                     \
	static struct attribute *rrxe_cm_attrs_##g[] = {                       \
		&rrxe_cm_files_##g[0].port_attr.attr,                          \
		&rrxe_cm_files_##g[1].port_attr.attr,                          \
		&rrxe_cm_files_##g[2].port_attr.attr,                          \
		&rrxe_cm_files_##g[3].port_attr.attr,                          \
		&rrxe_cm_files_##g[4].port_attr.attr,                          \
		&rrxe_cm_files_##g[5].port_attr.attr,                          \
		&rrxe_cm_files_##g[6].port_attr.attr,                          \
		&rrxe_cm_files_##g[7].port_attr.attr,                          \
		&rrxe_cm_files_##g[8].port_attr.attr,                          \
		&rrxe_cm_files_##g[9].port_attr.attr,                          \
		&rrxe_cm_files_##g[10].port_attr.attr,                         \
		NULL,                                                          \
	};                                                                     \
	static const struct attribute_group rrxe_cm_dir_##g = {                \
		.name = dir,                                                   \
		.attrs = rrxe_cm_attrs_##g,                                    \
	}

RRXE_CM_DIR(0, "cm_tx_msgs");
RRXE_CM_DIR(1, "cm_tx_retries");
RRXE_CM_DIR(2, "cm_rx_msgs");
RRXE_CM_DIR(3, "cm_rx_duplicates");

static const struct attribute_group *rrxe_cm_dirs[] = {
	&rrxe_cm_dir_0, &rrxe_cm_dir_1, &rrxe_cm_dir_2, &rrxe_cm_dir_3, NULL,
};

int rrxe_cm_add_counters(struct ib_device *device, u32 port_num)
{
	return ib_port_register_client_groups(device, port_num, rrxe_cm_dirs);
}

void rrxe_cm_remove_counters(struct ib_device *device, u32 port_num)
{
	ib_port_unregister_client_groups(device, port_num, rrxe_cm_dirs);
}

int rrxe_cm_pathrec_type(int gid_type)
{
	return sa_conv_gid_to_pathrec_type(gid_type);
}

/* The IB CM API of include/rdma/ib_cm.h: each one forwards to Rust. */
struct ib_cm_id *ib_create_cm_id(struct ib_device *device, ib_cm_handler cm_handler,
				 void *context)
{
	return rrxe_cm_create_id(device, cm_handler, context);
}
EXPORT_SYMBOL(ib_create_cm_id);

void ib_destroy_cm_id(struct ib_cm_id *cm_id)
{
	rrxe_cm_destroy_id(cm_id);
}
EXPORT_SYMBOL(ib_destroy_cm_id);

int ib_cm_listen(struct ib_cm_id *cm_id, __be64 service_id)
{
	return rrxe_cm_listen(cm_id, service_id);
}
EXPORT_SYMBOL(ib_cm_listen);

struct ib_cm_id *ib_cm_insert_listen(struct ib_device *device, ib_cm_handler cm_handler,
				     __be64 service_id)
{
	return rrxe_cm_insert_listen(device, cm_handler, service_id);
}
EXPORT_SYMBOL(ib_cm_insert_listen);

int ib_send_cm_req(struct ib_cm_id *cm_id, struct ib_cm_req_param *param)
{
	return rrxe_cm_send_req(cm_id, param);
}
EXPORT_SYMBOL(ib_send_cm_req);

int ib_send_cm_rep(struct ib_cm_id *cm_id, struct ib_cm_rep_param *param)
{
	return rrxe_cm_send_rep(cm_id, param);
}
EXPORT_SYMBOL(ib_send_cm_rep);

int ib_send_cm_rtu(struct ib_cm_id *cm_id, const void *private_data, u8 private_data_len)
{
	return rrxe_cm_send_rtu(cm_id, private_data, private_data_len);
}
EXPORT_SYMBOL(ib_send_cm_rtu);

int ib_send_cm_dreq(struct ib_cm_id *cm_id, const void *private_data, u8 private_data_len)
{
	return rrxe_cm_send_dreq(cm_id, private_data, private_data_len);
}
EXPORT_SYMBOL(ib_send_cm_dreq);

int ib_send_cm_drep(struct ib_cm_id *cm_id, const void *private_data, u8 private_data_len)
{
	return rrxe_cm_send_drep(cm_id, private_data, private_data_len);
}
EXPORT_SYMBOL(ib_send_cm_drep);

int ib_cm_notify(struct ib_cm_id *cm_id, enum ib_event_type event)
{
	return rrxe_cm_notify(cm_id, event);
}
EXPORT_SYMBOL(ib_cm_notify);

int ib_send_cm_rej(struct ib_cm_id *cm_id, enum ib_cm_rej_reason reason, void *ari,
		   u8 ari_length, const void *private_data, u8 private_data_len)
{
	return rrxe_cm_send_rej(cm_id, reason, ari, ari_length, private_data, private_data_len);
}
EXPORT_SYMBOL(ib_send_cm_rej);

int ib_prepare_cm_mra(struct ib_cm_id *cm_id)
{
	return rrxe_cm_prepare_mra(cm_id);
}
EXPORT_SYMBOL(ib_prepare_cm_mra);

int ib_cm_init_qp_attr(struct ib_cm_id *cm_id, struct ib_qp_attr *qp_attr, int *qp_attr_mask)
{
	return rrxe_cm_init_qp_attr(cm_id, qp_attr, qp_attr_mask);
}
EXPORT_SYMBOL(ib_cm_init_qp_attr);

int ib_send_cm_sidr_req(struct ib_cm_id *cm_id, struct ib_cm_sidr_req_param *param)
{
	return rrxe_cm_send_sidr_req(cm_id, param);
}
EXPORT_SYMBOL(ib_send_cm_sidr_req);

int ib_send_cm_sidr_rep(struct ib_cm_id *cm_id, struct ib_cm_sidr_rep_param *param)
{
	return rrxe_cm_send_sidr_rep(cm_id, param);
}
EXPORT_SYMBOL(ib_send_cm_sidr_rep);

const char *ibcm_reject_msg(int reason)
{
	return rrxe_cm_reject_msg(reason);
}
EXPORT_SYMBOL(ibcm_reject_msg);
