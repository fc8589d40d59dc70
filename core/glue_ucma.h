/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue only rdma_ucm needs (ucma/ucma_glue.c includes glue_ucma.c): the
 * answer of its IB client to RDMA netlink (struct ib_client_nl_info is
 * private to ib_core, drivers/infiniband/core/core_priv.h), and static
 * inlines of RDMA_OPTION_IB_PATH, the id table's xa_alloc() and its erase of
 * a present entry only. Forwards; all logic is in Rust.
 */
#ifndef RRXE_GLUE_UCMA_H
#define RRXE_GLUE_UCMA_H

#include <linux/types.h>

struct ib_client_nl_info;
struct device;
struct ib_device;
struct sa_path_rec;
struct xarray;

/* Fills in the answer of a get_global_nl_info callback. */
void rrxe_client_nl_info_set(struct ib_client_nl_info *res, struct device *cdev, u64 abi);

/* rdma_cap_opa_ah(): the port takes OPA address handles (and path records). */
bool rrxe_cap_opa_ah(struct ib_device *device, u32 port_num);
/* sa_convert_path_ib_to_opa() */
void rrxe_sa_convert_path_ib_to_opa(struct sa_path_rec *dest, struct sa_path_rec *src);

/* xa_alloc() of a NULL entry (a reserved slot), the lowest free 32-bit id. */
int rrxe_ids_reserve(struct xarray *xa, u32 *id);
/* Erases the entry at index if one is present (not a reserved slot);
 * returns it, or NULL. */
void *rrxe_ids_take(struct xarray *xa, unsigned long index);

#endif /* RRXE_GLUE_UCMA_H */
