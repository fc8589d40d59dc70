/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the data path's memory access (core/rdma/mr.rs): the static
 * inline and macro of highmem.h that map a page for a moment, and the
 * persistent memory write-back of libnvdimm.h (a static inline where the
 * architecture has none). One-line forwards.
 */
#ifndef RRXE_GLUE_DATA_H
#define RRXE_GLUE_DATA_H

#include <linux/highmem.h>
#include <linux/libnvdimm.h>

/* kmap_local_page(): the page's kernel address until rrxe_kunmap_local(). */
void *rrxe_kmap_local_page(struct page *page);
/* kunmap_local(): ends a mapping of rrxe_kmap_local_page(). */
void rrxe_kunmap_local(void *addr);

/* arch_wb_cache_pmem(): writes the CPU caches of the range back to memory. */
void rrxe_wb_cache_pmem(void *addr, size_t size);

#endif /* RRXE_GLUE_DATA_H */
