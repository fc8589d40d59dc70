// SPDX-License-Identifier: GPL-2.0
/* See glue_cm.h. */
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sysfs.h>
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
