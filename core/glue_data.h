/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the data path's memory access (core/rdma/mr.rs): the
 * persistent memory write-back of libnvdimm.h (a static inline where the
 * architecture has none). A page is mapped with the kernel's own Rust
 * helpers (kmap_local_page, kunmap_local), which CONFIG_RUST_INLINE_HELPERS
 * inlines.
 */
#ifndef RRXE_GLUE_DATA_H
#define RRXE_GLUE_DATA_H

#include <linux/highmem.h>
#include <linux/libnvdimm.h>

/* arch_wb_cache_pmem(): writes the CPU caches of the range back to memory. */
void rrxe_wb_cache_pmem(void *addr, size_t size);

#endif /* RRXE_GLUE_DATA_H */
