// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings shared with user space (the rxe ring layout), and their mmap.
 * The kernel keeps its own index in kernel memory and treats the other one
 * as untrusted input: it is masked on every read.
 */
#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "sroce/sroce.h"

int sroce_queue_init(struct sroce_dev *sdev, struct sroce_queue *q,
		     u32 nelem, u32 elem_size)
{
	u32 slots;

	if (!nelem || nelem > SROCE_MAX_QP_WR * 2)
		return -EINVAL;
	slots = roundup_pow_of_two(nelem + 1);
	elem_size = roundup_pow_of_two(max_t(u32, elem_size, SMP_CACHE_BYTES));
	q->slots = slots;
	q->mask = slots - 1;
	q->elem_size = elem_size;
	q->log2_elem = ilog2(elem_size);
	q->buf_size = sizeof(*q->buf) + (size_t)slots * elem_size;
	q->buf = vmalloc_user(q->buf_size);
	if (!q->buf)
		return -ENOMEM;
	q->buf->log2_elem_size = q->log2_elem;
	q->buf->index_mask = q->mask;
	q->mmap = NULL;
	return 0;
}

int sroce_queue_map(struct sroce_queue *q, struct ib_ucontext *uctx,
		    struct sroce_abi_mmap_info *mi)
{
	struct sroce_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->vaddr = q->buf;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma_entry,
					  PAGE_ALIGN(q->buf_size));
	if (err) {
		kfree(e);
		return err;
	}
	q->mmap = &e->rdma_entry;
	mi->offset = rdma_user_mmap_get_offset(&e->rdma_entry);
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;
}

/* A mapped ring is freed by sroce_mmap_free once no mmap can reach it. */
void sroce_queue_free(struct sroce_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(q->mmap);
	else
		vfree(q->buf);
	q->buf = NULL;
	q->mmap = NULL;
}

u32 sroce_queue_user_prod(struct sroce_queue *q)
{
	/* acquire: the slot contents the producer wrote are visible after this */
	return smp_load_acquire(&q->buf->producer_index) & q->mask;
}

u32 sroce_queue_user_cons(struct sroce_queue *q)
{
	/* acquire: the consumer is done with the slots before this index */
	return smp_load_acquire(&q->buf->consumer_index) & q->mask;
}

void sroce_queue_publish_prod(struct sroce_queue *q, u32 prod)
{
	/* release: slot contents are written before the index that exposes them */
	smp_store_release(&q->buf->producer_index, prod & q->mask);
}

void sroce_queue_publish_cons(struct sroce_queue *q, u32 cons)
{
	/* release: we are done reading the slots before the index frees them */
	smp_store_release(&q->buf->consumer_index, cons & q->mask);
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *re;
	struct sroce_mmap_entry *e;
	int err;

	re = rdma_user_mmap_entry_get(uctx, vma);
	if (!re)
		return -EINVAL;
	e = container_of(re, struct sroce_mmap_entry, rdma_entry);
	if (vma->vm_end - vma->vm_start > re->npages << PAGE_SHIFT)
		err = -EINVAL;
	else
		/* user PTEs hold page references: the ring outlives vfree */
		err = remap_vmalloc_range(vma, e->vaddr, 0);
	rdma_user_mmap_entry_put(re);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *re)
{
	struct sroce_mmap_entry *e =
		container_of(re, struct sroce_mmap_entry, rdma_entry);

	vfree(e->vaddr);
	kfree(e);
}
