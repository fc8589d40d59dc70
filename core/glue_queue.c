// SPDX-License-Identifier: GPL-2.0
/* C glue for the queues shared with user space (see glue_queue.h). */
#include <linux/cache.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rdma_user_rxe.h>
#include "glue_queue.h"

void *rrxe_vmalloc_user(unsigned long size)
{
	return vmalloc_user(size);
}

void rrxe_vfree(const void *addr)
{
	vfree(addr);
}

int rrxe_remap_vmalloc_range(struct vm_area_struct *vma, void *addr)
{
	return remap_vmalloc_range(vma, addr, 0);
}

unsigned int rrxe_cache_line_size(void)
{
	return cache_line_size();
}

struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata)
{
	return container_of(udata, struct uverbs_attr_bundle, driver_udata)->context;
}

int rrxe_modify_srq_cmd_in(struct ib_udata *udata, struct rxe_modify_srq_cmd *cmd)
{
	return ib_copy_validate_udata_in(udata, *cmd, mmap_info_addr);
}
