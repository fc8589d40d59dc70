// SPDX-License-Identifier: GPL-2.0
/* See glue_ucma.h. */
#include <linux/xarray.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <../drivers/infiniband/core/core_priv.h>

#include "glue_ucma.h"

void rrxe_client_nl_info_set(struct ib_client_nl_info *res, struct device *cdev, u64 abi)
{
	res->cdev = cdev;
	res->abi = abi;
}

bool rrxe_cap_opa_ah(struct ib_device *device, u32 port_num)
{
	return rdma_cap_opa_ah(device, port_num);
}

void rrxe_sa_convert_path_ib_to_opa(struct sa_path_rec *dest, struct sa_path_rec *src)
{
	sa_convert_path_ib_to_opa(dest, src);
}

int rrxe_ids_reserve(struct xarray *xa, u32 *id)
{
	return xa_alloc(xa, id, NULL, xa_limit_32b, GFP_KERNEL);
}

void *rrxe_ids_take(struct xarray *xa, unsigned long index)
{
	void *entry;

	xa_lock(xa);
	entry = xa_load(xa, index);
	if (entry)
		__xa_erase(xa, index);
	xa_unlock(xa);
	return entry;
}
