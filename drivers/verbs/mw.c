// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows, type 1 and type 2B (IBA 10.6.7.2).  A window names part
 * of a region that has IB_ACCESS_MW_BIND; a remote access through it ends
 * up as an access of that region.  The window counts its own accesses in
 * "active" (under its lock, while VALID), so an unbind waits only for the
 * accesses that found this binding: a bounded wait, whatever other traffic
 * the region carries.
 */
#include <linux/slab.h>
#include <linux/rcupdate.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

#define SROCE_MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	u32 idx;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&sdev->n_mw) > SROCE_MAX_MW) {
		atomic_dec(&sdev->n_mw);
		return -ENOMEM;
	}
	spin_lock_init(&mw->lock);
	/* type 1 is bindable at once; type 2 waits FREE for a bind WR */
	mw->state = ibmw->type == IB_MW_TYPE_1 ? SROCE_MR_VALID : SROCE_MR_FREE;
	err = xa_alloc_cyclic(&sdev->mw_xa, &idx, NULL,
			      XA_LIMIT(SROCE_MW_INDEX_BASE,
				       SROCE_MW_INDEX_BASE + SROCE_MAX_MW - 1),
			      &sdev->mw_next, GFP_KERNEL);
	if (err < 0) {
		atomic_dec(&sdev->n_mw);
		return err;
	}
	mw->key = idx << 8 | (get_random_u32() & 0xff);
	ibmw->rkey = mw->key;
	xa_store(&sdev->mw_xa, idx, mw, GFP_KERNEL);
	return 0;
}

/*
 * Forget a binding the caller took out of @mw under its lock: no access
 * through it is still running afterwards (C10-68, C10-70).  An access is
 * counted under that lock, so all that found the binding are counted now.
 */
static void sroce_mw_drop_mr(struct sroce_mw *mw, struct sroce_mr *mr)
{
	if (mw)
		wait_var_event(&mw->active, !atomic_read(&mw->active));
	spin_lock(&mr->lock);
	mr->n_mw--;
	spin_unlock(&mr->lock);
	sroce_mr_unref(mr);
}

/*
 * An unbind outside dealloc_mw took a hold under the window's lock, in the
 * RCU section that found it: dealloc_mw waits for it before ib_core frees
 * the window.  wake_up_var() only hashes the address.
 */
static void sroce_mw_unhold(struct sroce_mw *mw)
{
	if (atomic_dec_and_test(&mw->hold))
		wake_up_var(&mw->hold);
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *mr;
	unsigned long flags;

	/* ibmw->rkey still holds the index: only the tag changes */
	xa_erase(&sdev->mw_xa, ibmw->rkey >> 8);
	/* ib_core frees the window when we return: no lookup may hold it */
	synchronize_rcu();
	spin_lock_irqsave(&mw->lock, flags);
	mr = mw->mr;
	mw->mr = NULL;
	mw->state = SROCE_MR_FREE;
	spin_unlock_irqrestore(&mw->lock, flags);
	/* C10-70: nothing runs through the window once this returns */
	if (mr)
		sroce_mw_drop_mr(mw, mr);
	wait_var_event(&mw->hold, !atomic_read(&mw->hold));
	atomic_dec(&sdev->n_mw);
	return 0;
}

/*
 * The region a bind names, referenced and counted as bound, or NULL: a
 * VALID region of the window's PD with MW_BIND access (C10-73), local
 * write for remote write or atomic windows (C10-62, C10-74), and the
 * window inside it (C10-75).  Counted under its lock, so neither
 * deregistration nor invalidation slips in.
 */
static struct sroce_mr *sroce_mw_bind_mr(struct sroce_qp *qp,
					 struct ib_pd *pd,
					 const struct sroce_swqe *wqe)
{
	struct sroce_mr *mr = sroce_mr_ref(qp->sdev, wqe->bind_mr_lkey);
	u64 va = wqe->bind_va, len = wqe->bind_length;
	bool ok;

	if (!mr)
		return NULL;
	spin_lock(&mr->lock);
	ok = !mr->dead && READ_ONCE(mr->key) == wqe->bind_mr_lkey &&
	     /* acquire: a fast-reg registration's fields belong to VALID */
	     smp_load_acquire(&mr->state) == SROCE_MR_VALID &&
	     mr->ibmr.pd == pd && (mr->access & IB_ACCESS_MW_BIND) &&
	     (!(wqe->bind_access & (IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_ATOMIC)) ||
	      (mr->access & IB_ACCESS_LOCAL_WRITE)) &&
	     va >= mr->iova && len <= mr->length &&
	     va - mr->iova <= mr->length - len;
	if (ok)
		mr->n_mw++;
	spin_unlock(&mr->lock);
	if (!ok) {
		sroce_mr_unref(mr);
		return NULL;
	}
	return mr;
}

/*
 * Execute a BIND_MW WQE of @qp, in send queue order.  Type 1: bind,
 * rebind, or unbind with length 0 (C10-66.2.4).  Type 2B: only a FREE
 * window, never length 0 (o10-37.2.30, o10-37.2.40); it is bound to @qp.
 * Both: the window of the QP's PD (C10-72), VA-based only.  On failure
 * nothing changes.
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_swqe *wqe)
{
	struct sroce_mr *mr = NULL, *old = NULL;
	struct sroce_mw *mw;
	unsigned long flags;
	bool type1;
	int err = -EINVAL;

	/* ZERO_BASED and non-remote rights are refused here */
	if (!sroce_key_is_mw(wqe->bind_mw_key) ||
	    (wqe->bind_new_key >> 8) != (wqe->bind_mw_key >> 8) ||
	    (wqe->bind_access & ~SROCE_MW_ACCESS))
		return -EINVAL;
	rcu_read_lock();
	mw = xa_load(&qp->sdev->mw_xa, wqe->bind_mw_key >> 8);
	if (!mw || mw->ibmw.pd != qp->ibqp.pd)
		goto out;
	type1 = mw->ibmw.type == IB_MW_TYPE_1;
	if (!type1 && !wqe->bind_length)
		goto out;
	if (wqe->bind_length) {
		mr = sroce_mw_bind_mr(qp, mw->ibmw.pd, wqe);
		if (!mr)
			goto out;
	}
	spin_lock_irqsave(&mw->lock, flags);
	/*
	 * Type 1 names its current key (librxe tracks it); a type 2 consumer
	 * need not have stored the key of its last bind WR: the index decides.
	 */
	if ((type1 && mw->key == wqe->bind_mw_key) ||
	    (!type1 && mw->state == SROCE_MR_FREE)) {
		old = mw->mr;
		mw->mr = mr;
		mr = NULL;
		mw->access = wqe->bind_access;
		mw->va = wqe->bind_va;
		mw->length = wqe->bind_length;
		mw->qp_serial = qp->serial;
		/* C10-66.2.2, o10-37.2.33: accesses with the old key fail */
		mw->key = wqe->bind_new_key;
		mw->state = SROCE_MR_VALID;
		if (old)
			atomic_inc(&mw->hold);
		err = 0;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
out:
	rcu_read_unlock();
	if (mr)
		sroce_mw_drop_mr(NULL, mr);
	/* C10-68: no access under the previous binding once this completes */
	if (old) {
		sroce_mw_drop_mr(mw, old);
		sroce_mw_unhold(mw);
	}
	return err;
}

/*
 * LOCAL_INV by @qp, or the IETH of a SEND with Invalidate @qp received
 * (o10-37.2.44): type 2B only (o10-37.2.26, o10-37.2.27), of the QP's PD;
 * a VALID window must be bound to @qp and named by its key, a FREE one
 * stays FREE (a no-op).
 */
int sroce_mw_invalidate(struct sroce_qp *qp, u32 key)
{
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	unsigned long flags;
	int err = -EINVAL;

	rcu_read_lock();
	mw = xa_load(&qp->sdev->mw_xa, key >> 8);
	if (mw && mw->ibmw.type == IB_MW_TYPE_2 &&
	    mw->ibmw.pd == qp->ibqp.pd) {
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->state == SROCE_MR_FREE) {
			err = 0;
		} else if (mw->key == key && mw->qp_serial == qp->serial) {
			mr = mw->mr;
			mw->mr = NULL;
			mw->state = SROCE_MR_FREE;
			if (mr)
				atomic_inc(&mw->hold);
			err = 0;
		}
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	if (mr) {
		sroce_mw_drop_mr(mw, mr);
		sroce_mw_unhold(mw);
	}
	return err;
}

/*
 * Begin a remote access of [va, va + len) through window @key, as
 * sroce_mr_get() does for a region: the region, or NULL.  Checks the key
 * and state, the PD (C10-76.2.1) or the bound QP and PD (o10-37.2.43),
 * the rights and the bounds (C10-77).  The access is counted while the
 * window is seen VALID, under its lock: an unbind either finds it counted
 * and waits, or this finds the window changed.
 */
struct sroce_mr *sroce_mw_get(struct sroce_qp *qp, u32 key, u64 va, u32 len,
			      u32 access, struct sroce_mw **mwp)
{
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	unsigned long flags;

	rcu_read_lock();
	mw = xa_load(&qp->sdev->mw_xa, key >> 8);
	if (mw) {
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->state == SROCE_MR_VALID && mw->mr && mw->key == key &&
		    mw->ibmw.pd == qp->ibqp.pd &&
		    (mw->ibmw.type == IB_MW_TYPE_1 ||
		     mw->qp_serial == qp->serial) &&
		    (mw->access & access) == access &&
		    va >= mw->va && len <= mw->length &&
		    va - mw->va <= mw->length - len) {
			mr = mw->mr;
			/* the window's own reference keeps it above zero */
			refcount_inc(&mr->ref);
			/* counted: dealloc_mw and every unbind wait for it */
			atomic_inc(&mw->active);
			*mwp = mw;
		}
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	return mr;
}

/* End an access begun by sroce_mw_get(). */
void sroce_mw_put(struct sroce_mr *mr, struct sroce_mw *mw)
{
	if (atomic_dec_and_test(&mw->active))
		wake_up_var(&mw->active);
	sroce_mr_unref(mr);
}
