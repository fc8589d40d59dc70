/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the data path's memory access (core/rdma/mr.rs): the static
 * inline and macro of highmem.h that map a page for a moment. One-line
 * forwards.
 */
#ifndef RRXE_GLUE_DATA_H
#define RRXE_GLUE_DATA_H

#include <linux/highmem.h>

/* kmap_local_page(): the page's kernel address until rrxe_kunmap_local(). */
void *rrxe_kmap_local_page(struct page *page);
/* kunmap_local(): ends a mapping of rrxe_kmap_local_page(). */
void rrxe_kunmap_local(void *addr);

#endif /* RRXE_GLUE_DATA_H */
