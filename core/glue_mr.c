// SPDX-License-Identifier: GPL-2.0
/*
 * C glue for memory regions and multicast (see glue_mr.h). Not compiled on
 * its own: rxe/rxe_glue.c includes it.
 */
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "glue_mr.h"

struct ib_umem *rrxe_umem_get(struct ib_device *dev, unsigned long addr, size_t size, int access)
{
	return ib_umem_get_va(dev, addr, size, access);
}

size_t rrxe_umem_num_pages(struct ib_umem *umem)
{
	return ib_umem_num_pages(umem);
}

struct sg_table *rrxe_umem_sgt(struct ib_umem *umem)
{
	return &umem->sgt_append.sgt;
}

struct page *rrxe_sg_page_iter_page(struct sg_page_iter *iter)
{
	return sg_page_iter_page(iter);
}

bool rrxe_page_is_pmem(struct page *page)
{
	return region_intersects(page_to_phys(page), PAGE_SIZE, IORESOURCE_MEM,
				 IORES_DESC_PERSISTENT_MEMORY) == REGION_INTERSECTS;
}

struct page *rrxe_virt_dma_to_page(u64 addr)
{
	return ib_virt_dma_to_page(addr);
}

int rrxe_dev_mc_add(struct net_device *ndev, const u8 *addr)
{
	return dev_mc_add(ndev, addr);
}

int rrxe_dev_mc_del(struct net_device *ndev, const u8 *addr)
{
	return dev_mc_del(ndev, addr);
}
