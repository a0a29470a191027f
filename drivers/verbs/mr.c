// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: a page list of kernel virtual addresses, so the transport
 * copies straight between skbs and the registered pages.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/wait_bit.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

#define SROCE_ACCESS_ALL (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			  IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING | \
			  SROCE_ACCESS_FLUSH)

static int sroce_check_access(int access)
{
	if (access & ~SROCE_ACCESS_ALL)
		return -EOPNOTSUPP;
	/* remote write or atomic access requires local write (IBA 10.6.3.1) */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct sroce_mr *sroce_mr_alloc(struct sroce_dev *sdev,
				       struct ib_pd *pd, enum sroce_mr_kind kind)
{
	struct sroce_mr *mr;
	u32 idx;
	int err;

	if (atomic_inc_return(&sdev->n_mr) > SROCE_MAX_MR) {
		atomic_dec(&sdev->n_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&sdev->n_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->sdev = sdev;
	mr->kind = kind;
	spin_lock_init(&mr->lock);
	refcount_set(&mr->ref, 1);
	init_completion(&mr->done);
	/* reserve the index now, publish the MR once it is complete */
	err = xa_alloc_cyclic(&sdev->mr_xa, &idx, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		atomic_dec(&sdev->n_mr);
		return ERR_PTR(err);
	}
	mr->key = idx << 8 | (get_random_u32() & 0xff);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	mr->ibmr.pd = pd;
	mr->ibmr.device = &sdev->ib_dev;
	return mr;
}

static void sroce_mr_publish(struct sroce_mr *mr, u8 state)
{
	mr->state = state;
	xa_store(&mr->sdev->mr_xa, mr->key >> 8, mr, GFP_KERNEL);
}

static void sroce_mr_free(struct sroce_mr *mr)
{
	struct sroce_dev *sdev = mr->sdev;

	xa_erase(&sdev->mr_xa, mr->key >> 8);
	sroce_mr_unref(mr);
	/* a loopback packet that references our pages holds the MR until freed */
	while (!wait_for_completion_timeout(&mr->done, 10 * HZ))
		pr_warn_ratelimited("sroce: MR %#x waits for packets that still reference it\n",
				    mr->key);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->map);
	/* a lookup may still hold the pointer before its refcount_inc_not_zero */
	kfree_rcu(mr, rcu);
	atomic_dec(&sdev->n_mr);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct sroce_mr *mr;
	int err;

	err = sroce_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = sroce_mr_alloc(to_sdev(pd->device), pd, SROCE_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->access = access;
	mr->iova = 0;
	mr->length = U64_MAX;
	sroce_mr_publish(mr, SROCE_MR_VALID);
	return &mr->ibmr;
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct ib_block_iter biter;
	struct ib_umem *umem;
	struct sroce_mr *mr;
	u32 n = 0;
	int err;

	err = sroce_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length || length > SROCE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	if ((start ^ iova) & ~PAGE_MASK)
		return ERR_PTR(-EINVAL);
	umem = ib_umem_get(&sdev->ib_dev, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	mr = sroce_mr_alloc(sdev, pd, SROCE_MR_USER);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->npages = ib_umem_num_dma_blocks(umem, PAGE_SIZE);
	mr->pages = kvcalloc(mr->npages, sizeof(void *), GFP_KERNEL);
	if (!mr->pages) {
		sroce_mr_free(mr);
		return ERR_PTR(-ENOMEM);
	}
	/* virtual-DMA device: block addresses are kernel virtual addresses */
	rdma_umem_for_each_dma_block(umem, &biter, PAGE_SIZE) {
		if (n >= mr->npages)
			break;
		mr->pages[n++] = (void *)(uintptr_t)
				 rdma_block_iter_dma_address(&biter);
	}
	mr->page_shift = PAGE_SHIFT;
	mr->offset = start & ~PAGE_MASK;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	sroce_mr_publish(mr, SROCE_MR_VALID);
	return &mr->ibmr;
}

/*
 * A fast-registration MR: its key starts FREE and names no memory until a
 * REG_MR work request registers what map_mr_sg prepared.
 */
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(to_sdev(pd->device), pd, SROCE_MR_FAST);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->max_pages = max_num_sg;
	mr->pages = kvcalloc(max_num_sg, sizeof(void *), GFP_KERNEL);
	mr->map = kvzalloc(struct_size(mr->map, pages, max_num_sg), GFP_KERNEL);
	if (!mr->pages || !mr->map) {
		sroce_mr_free(mr);
		return ERR_PTR(-ENOMEM);
	}
	sroce_mr_publish(mr, SROCE_MR_FREE);
	return &mr->ibmr;
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr_map *map = to_smr(ibmr)->map;

	if (map->npages >= to_smr(ibmr)->max_pages)
		return -ENOMEM;
	/* virtual-DMA device: the "DMA address" is a kernel virtual address */
	map->pages[map->npages++] = (void *)(uintptr_t)addr;
	return 0;
}

/*
 * Prepare the page list of the next REG_MR.  The key may still be VALID
 * (a consumer that posts LOCAL_INV + REG_MR maps first): the live list is
 * only replaced when REG_MR runs.
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	u32 psize = ibmr->page_size;
	int n;

	if (mr->kind != SROCE_MR_FAST || !is_power_of_2(psize) ||
	    !(psize & SROCE_PAGE_SIZE_CAP))
		return -EINVAL;
	mr->map->npages = 0;
	mr->map->page_shift = ilog2(psize);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_mr_set_page);
	mr->map->offset = ibmr->iova & (psize - 1);
	return n;
}

/* A reference by index, whatever the key's state: for REG_MR, binds, invalidation. */
struct sroce_mr *sroce_mr_ref(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * The key just left VALID: wait until every access that found it VALID
 * has ended, so nothing touches the old pages once the caller reports the
 * invalidation or replaces the registration (o10-37.2.14).  An access is
 * one packet, or one engine pass of READ responses: short and unblocking.
 */
void sroce_mr_quiesce(struct sroce_mr *mr)
{
	/* pairs with the barrier in sroce_mr_get(): it sees the state or we see it */
	smp_mb();
	wait_var_event(&mr->active, !atomic_read(&mr->active));
}

/*
 * Execute a REG_MR work request of @qp (o10-37.2.5): the MR must be a
 * FREE fast-registration MR of the QP's PD, the access valid and the
 * registration inside the page list.  On failure nothing changes.
 */
int sroce_mr_fast_reg(struct sroce_qp *qp, const struct sroce_swqe *wqe)
{
	struct sroce_mr *mr;
	struct sroce_mr_map *map;
	int err = -EINVAL;

	mr = sroce_mr_ref(qp->sdev, wqe->reg_key);
	if (!mr)
		return -EINVAL;
	map = mr->map;
	if (mr->kind != SROCE_MR_FAST || mr->ibmr.pd != qp->ibqp.pd ||
	    sroce_check_access(wqe->reg_access))
		goto out;
	if (!wqe->reg_length || wqe->reg_iova + wqe->reg_length < wqe->reg_iova ||
	    (u64)map->offset + wqe->reg_length >
	    ((u64)map->npages << map->page_shift))
		goto out;
	spin_lock(&mr->lock);
	if (mr->state == SROCE_MR_FREE) {
		mr->state = SROCE_MR_BUSY;
		err = 0;
	}
	spin_unlock(&mr->lock);
	if (err)
		goto out;
	/* a late access that found the old registration VALID ends first */
	sroce_mr_quiesce(mr);
	memcpy(mr->pages, map->pages, map->npages * sizeof(void *));
	mr->npages = map->npages;
	mr->page_shift = map->page_shift;
	mr->offset = map->offset;
	mr->iova = wqe->reg_iova;
	mr->length = wqe->reg_length;
	mr->access = wqe->reg_access;
	WRITE_ONCE(mr->key, wqe->reg_key);
	/* release: whoever sees VALID sees the registration and its key */
	smp_store_release(&mr->state, SROCE_MR_VALID);
out:
	sroce_mr_unref(mr);
	return err;
}

/* Only a fast-reg key changes under its users: only its accesses are counted. */
static bool sroce_mr_counted(const struct sroce_mr *mr)
{
	return mr->kind == SROCE_MR_FAST;
}

/*
 * LOCAL_INV of @qp, or the IETH of a SEND with Invalidate @qp received:
 * only a fast-registration key of the QP's PD may be invalidated
 * (o10-37.2.13); a FREE one stays FREE.  On success no access through the
 * key is still running.
 */
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	if (sroce_key_is_mw(key))
		return sroce_mw_invalidate(qp, key);
	mr = sroce_mr_ref(qp->sdev, key);
	if (!mr)
		return -EINVAL;
	if (mr->kind == SROCE_MR_FAST && mr->ibmr.pd == qp->ibqp.pd) {
		/* the key and its state change together: no REG_MR slips in */
		spin_lock(&mr->lock);
		/* o10-37.2.17: not while a window is bound to it */
		if (mr->key == key && mr->state != SROCE_MR_BUSY && !mr->n_mw) {
			WRITE_ONCE(mr->state, SROCE_MR_FREE);
			err = 0;
		}
		spin_unlock(&mr->lock);
	}
	if (!err)
		sroce_mr_quiesce(mr);
	sroce_mr_unref(mr);
	return err;
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);

	/* a bound window keeps its region (uverbs retries after dealloc_mw) */
	spin_lock(&mr->lock);
	if (mr->n_mw) {
		spin_unlock(&mr->lock);
		return -EBUSY;
	}
	mr->dead = true;
	spin_unlock(&mr->lock);
	sroce_mr_free(mr);
	return 0;
}

/*
 * Begin an access through @key; sroce_mr_put() ends it.  A fast-reg key must
 * be VALID (a user MR always is): the access is counted first, so an invalidation either sees it
 * and waits for it, or this sees the key leave VALID and fails.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr = sroce_mr_ref(sdev, key);

	if (!mr)
		return NULL;
	if (sroce_mr_counted(mr)) {
		atomic_inc(&mr->active);
		/* pairs with sroce_mr_quiesce() */
		smp_mb__after_atomic();
		/* acquire: the key read below belongs to the state seen */
		if (smp_load_acquire(&mr->state) != SROCE_MR_VALID) {
			sroce_mr_put(mr);
			return NULL;
		}
	}
	if (READ_ONCE(mr->key) != key) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

void sroce_mr_unref(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/* End an access begun by sroce_mr_get(). */
void sroce_mr_put(struct sroce_mr *mr)
{
	if (sroce_mr_counted(mr) && atomic_dec_and_test(&mr->active))
		wake_up_var(&mr->active);
	sroce_mr_unref(mr);
}

/* Access check for [va, va + len); 0 or -EACCES/-EFAULT. */
int sroce_mr_check(struct sroce_mr *mr, struct sroce_pd *pd, u64 va, u32 len,
		   u32 access)
{
	/* acquire: pairs with the release that published the registration */
	if (smp_load_acquire(&mr->state) != SROCE_MR_VALID ||
	    mr->ibmr.pd != &pd->ibpd)
		return -EACCES;
	if ((mr->access & access) != access)
		return -EACCES;
	if (va < mr->iova || len > mr->length ||
	    va - mr->iova > mr->length - len)
		return -EFAULT;
	return 0;
}

/*
 * Walk [va, va + len) of a checked MR page by page; fn gets the kernel
 * address of each piece and its offset within the transfer.
 */
static int sroce_mr_walk(struct sroce_mr *mr, u64 va, u32 len,
			 int (*fn)(void *kva, u32 off, u32 n, void *arg),
			 void *arg)
{
	u64 off;
	u32 done = 0;
	int err;

	if (mr->kind == SROCE_MR_DMA)
		return fn((void *)(uintptr_t)va, 0, len, arg);
	off = va - mr->iova + mr->offset;
	while (done < len) {
		u64 pidx = off >> mr->page_shift;
		u32 poff = off & ((1ULL << mr->page_shift) - 1);
		u32 n = min_t(u64, len - done, (1ULL << mr->page_shift) - poff);

		if (pidx >= mr->npages)
			return -EFAULT;
		err = fn((u8 *)mr->pages[pidx] + poff, done, n, arg);
		if (err)
			return err;
		done += n;
		off += n;
	}
	return 0;
}

/* Kernel address of an 8-byte aligned word of a checked MR (never straddles pages). */
u64 *sroce_mr_atomic_ptr(struct sroce_mr *mr, u64 va)
{
	u64 off;
	u8 *p;

	if (mr->kind == SROCE_MR_DMA)
		return (u64 *)(uintptr_t)va;
	off = va - mr->iova + mr->offset;
	if ((off >> mr->page_shift) >= mr->npages)
		return NULL;
	p = (u8 *)mr->pages[off >> mr->page_shift] +
	    (off & ((1ULL << mr->page_shift) - 1));
	/* a fast-reg iova need not keep the pages' alignment (zero-based MRs) */
	if ((uintptr_t)p & 7)
		return NULL;
	return (u64 *)p;
}

struct sroce_copy_arg {
	u8	*buf;
	bool	to_mr;
};

static int sroce_copy_fn(void *kva, u32 off, u32 n, void *arg)
{
	struct sroce_copy_arg *a = arg;

	if (a->to_mr)
		memcpy(kva, a->buf + off, n);
	else
		memcpy(a->buf + off, kva, n);
	return 0;
}

int sroce_mr_copy(struct sroce_mr *mr, u64 va, void *buf, u32 len, bool to_mr)
{
	struct sroce_copy_arg a = { .buf = buf, .to_mr = to_mr };

	return sroce_mr_walk(mr, va, len, sroce_copy_fn, &a);
}

struct sroce_skb_arg {
	const struct sk_buff *skb;
	u32 off;
};

static int sroce_skb_fn(void *kva, u32 off, u32 n, void *arg)
{
	struct sroce_skb_arg *a = arg;

	return skb_copy_bits(a->skb, a->off + off, kva, n);
}

/* One piece of a user MR (never crossing a page) as an skb page fragment. */
static int sroce_frag_fn(void *kva, u32 off, u32 n, void *arg)
{
	struct sk_buff *skb = arg;
	struct page *page = virt_to_page(kva);
	u32 poff = offset_in_page(kva);
	int i = skb_shinfo(skb)->nr_frags;

	if (skb_can_coalesce(skb, i, page, poff)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], n);
	} else {
		if (i >= MAX_SKB_FRAGS)
			return -E2BIG;
		get_page(page);
		skb_fill_page_desc(skb, i, page, poff, n);
	}
	skb->len += n;
	skb->data_len += n;
	skb->truesize += n;
	return 0;
}

/*
 * Append [va, va + len) of a checked MR to skb by reference: only pinned
 * user pages (-EOPNOTSUPP for others); -E2BIG past MAX_SKB_FRAGS.  Each
 * fragment holds its page, so a deregistration cannot free it under the
 * packet.
 */
int sroce_mr_ref_skb(struct sroce_mr *mr, u64 va, u32 len, struct sk_buff *skb)
{
	if (mr->kind != SROCE_MR_USER)
		return -EOPNOTSUPP;
	return sroce_mr_walk(mr, va, len, sroce_frag_fn, skb);
}

int sroce_mr_from_skb(struct sroce_mr *mr, u64 va, const struct sk_buff *skb,
		      u32 off, u32 len)
{
	struct sroce_skb_arg a = { .skb = skb, .off = off };

	return sroce_mr_walk(mr, va, len, sroce_skb_fn, &a);
}
