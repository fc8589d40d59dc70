/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the queues shared with user space (core/rdma/mmap.rs): the
 * vmalloc_user() macro, cache_line_size() and the user context of a verbs
 * command's udata. One-line forwards.
 */
#ifndef RRXE_GLUE_QUEUE_H
#define RRXE_GLUE_QUEUE_H

#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

void *rrxe_vmalloc_user(unsigned long size);
void rrxe_vfree(const void *addr);
int rrxe_remap_vmalloc_range(struct vm_area_struct *vma, void *addr);
unsigned int rrxe_cache_line_size(void);
/* The user context of the uverbs command whose driver udata this is. */
struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata);

#endif /* RRXE_GLUE_QUEUE_H */
