/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for memory regions and multicast (core/rdma/mr.rs, umem.rs,
 * mcast.rs): static inlines and macros of ib_umem.h, scatterlist.h,
 * ib_verbs.h, io.h and netdevice.h. One-line forwards.
 */
#ifndef RRXE_GLUE_MR_H
#define RRXE_GLUE_MR_H

#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

/* ib_umem_get_va(): pins user memory; an ERR_PTR on failure. */
struct ib_umem *rrxe_umem_get(struct ib_device *dev, unsigned long addr, size_t size, int access);
size_t rrxe_umem_num_pages(struct ib_umem *umem);
struct sg_table *rrxe_umem_sgt(struct ib_umem *umem);
struct page *rrxe_sg_page_iter_page(struct sg_page_iter *iter);
/* is_pmem_page() of the C driver: the page is persistent memory. */
bool rrxe_page_is_pmem(struct page *page);
/* ib_virt_dma_to_page(): the page of a kernel virtual "DMA" address. */
struct page *rrxe_virt_dma_to_page(u64 addr);
int rrxe_dev_mc_add(struct net_device *ndev, const u8 *addr);
int rrxe_dev_mc_del(struct net_device *ndev, const u8 *addr);

#endif /* RRXE_GLUE_MR_H */
