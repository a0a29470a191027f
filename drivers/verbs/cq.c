// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  User CQs hold struct ib_uverbs_wc (what librxe copies
 * straight into ibv_wc); kernel CQs hold struct ib_wc.
 */
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    sroce_create_cq_arg_t *arg)
{
	struct ib_udata *udata = sroce_create_cq_udata(arg);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_abi_create_cq_resp resp = {};
	u32 elem;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe >= SROCE_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->n_cq) > SROCE_MAX_CQ) {
		err = -ENOMEM;
		goto err_cnt;
	}
	cq->user = !!udata;
	elem = cq->user ? sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc);
	err = sroce_queue_init(sdev, &cq->q, attr->cqe, elem);
	if (err)
		goto err_cnt;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_mutex);
	INIT_LIST_HEAD(&cq->waiters);
	if (udata) {
		err = sroce_queue_map(&cq->q, sroce_udata_uctx(udata),
				      &resp.mi);
		if (err)
			goto err_q;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_q;
	}
	ibcq->cqe = cq->q.slots - 1;
	return 0;

err_q:
	sroce_queue_free(&cq->q);
err_cnt:
	atomic_dec(&sdev->n_cq);
	return err;
}

int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_queue_free(&cq->q);
	atomic_dec(&to_sdev(ibcq->device)->n_cq);
	return 0;
}

static u32 sroce_cq_cons(struct sroce_cq *cq)
{
	return cq->user ? sroce_queue_user_cons(&cq->q) : cq->cons & cq->q.mask;
}

/* Slots free for a completion that holds no reservation.  cq->lock held. */
static u32 sroce_cq_room(struct sroce_cq *cq)
{
	u32 used = (cq->prod - sroce_cq_cons(cq)) & cq->q.mask;

	lockdep_assert_held(&cq->lock);
	return cq->q.mask - min(used + cq->reserved, cq->q.mask);
}

/* Room was made: the QPs whose flushes wait for it go on.  cq->lock held. */
static void sroce_cq_wake(struct sroce_cq *cq)
{
	struct sroce_cq_wait *w, *tmp;

	lockdep_assert_held(&cq->lock);
	list_for_each_entry_safe(w, tmp, &cq->waiters, node) {
		list_del_init(&w->node);
		sroce_qp_sched(w->qp);
	}
}

/*
 * A kernel QP in Error: a slot for its next flush completion, or false
 * with the QP queued on @w (@queued: by this call) until poll_cq or
 * resize makes room.  A lost flush would hang ib_drain_qp(), which waits
 * for one, and the consumer of a CQ that overflowed may drain before it
 * polls.
 */
bool sroce_cq_reserve(struct sroce_cq *cq, struct sroce_cq_wait *w,
		      bool *queued)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&cq->lock, flags);
	ok = sroce_cq_room(cq) > 0;
	*queued = !ok && list_empty(&w->node);
	if (ok)
		cq->reserved++;
	else if (*queued)
		list_add_tail(&w->node, &cq->waiters);
	spin_unlock_irqrestore(&cq->lock, flags);
	return ok;
}

/* A QP going away: no poll may schedule it any more. */
void sroce_cq_unwait(struct sroce_cq *cq, struct sroce_cq_wait *w)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	list_del_init(&w->node);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* Completions not yet polled (a snapshot: the consumer moves on). */
u32 sroce_cq_fill(struct sroce_cq *cq)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&cq->lock, flags);
	n = (cq->prod - sroce_cq_cons(cq)) & cq->q.mask;
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Move the completions not yet polled, in order, into a ring of @cqe.
 * librxe holds its CQ lock across the call and maps the new ring from the
 * response; the old one stays mapped (and allocated) until it unmaps it.
 * The bulk is copied outside cq->lock (the resize mutex keeps the old ring):
 * under it only what was added meanwhile.  Entries polled meanwhile (a
 * kernel CQ) are skipped by starting the new consumer index past them.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_abi_resize_cq_resp resp = {};
	u32 esize = cq->user ? sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc);
	u32 n, i, d, cons0, prod0, done;
	struct sroce_queue nq, oq;
	unsigned long flags;
	int err;

	if (cqe < 1 || cqe >= SROCE_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = sroce_queue_init(sdev, &nq, cqe, esize);
	if (err)
		return err;
	if (udata) {
		err = sroce_queue_map(&nq, sroce_udata_uctx(udata), &resp.mi) ?:
		      ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_q;
	}
	mutex_lock(&cq->resize_mutex);
	spin_lock_irqsave(&cq->lock, flags);
	cons0 = sroce_cq_cons(cq);
	prod0 = cq->prod;
	n = (prod0 - cons0) & cq->q.mask;
	spin_unlock_irqrestore(&cq->lock, flags);
	/* never drop a completion: what is there must fit */
	err = -EINVAL;
	if (n > (u32)cqe)
		goto err_unlock;
	for (i = 0; i < n; i++)
		memcpy(sroce_queue_slot(&nq, i),
		       sroce_queue_slot(&cq->q, cons0 + i), esize);

	spin_lock_irqsave(&cq->lock, flags);
	d = cq->prod - prod0;
	done = (sroce_cq_cons(cq) - cons0) & cq->q.mask;
	/* a CQ in error stays so (10.10.1.2); a consumer index that ran past
	 * what was there is not librxe's, which holds its lock
	 */
	if (n + d + cq->reserved > (u32)cqe || done > n || cq->overflow) {
		err = cq->overflow ? -EIO : done > n ? -EAGAIN : -EINVAL;
		spin_unlock_irqrestore(&cq->lock, flags);
		goto err_unlock;
	}
	for (i = 0; i < d; i++)
		memcpy(sroce_queue_slot(&nq, n + i),
		       sroce_queue_slot(&cq->q, prod0 + i), esize);
	oq = cq->q;
	cq->q = nq;
	cq->prod = n + d;
	cq->cons = done;
	if (cq->user)
		cq->q.buf->consumer_index = done;
	sroce_queue_publish_prod(&cq->q, cq->prod);
	ibcq->cqe = cq->q.slots - 1;
	sroce_cq_wake(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	mutex_unlock(&cq->resize_mutex);
	sroce_queue_free(&oq);
	return 0;

err_unlock:
	mutex_unlock(&cq->resize_mutex);
err_q:
	sroce_queue_free(&nq);
	return err;
}

/*
 * libibverbs' IBV_WC_WITH_INV is 1 << 3, where the kernel has IP_CSUM_OK
 * (never set here); the kernel's IB_WC_WITH_INVALIDATE (1 << 2) would read
 * as IBV_WC_IP_CSUM_OK.  librxe copies wc_flags as they are.
 */
#define SROCE_UWC_WITH_INV	(1 << 3)

static void sroce_wc_to_uwc(struct ib_uverbs_wc *u, const struct ib_wc *wc)
{
	memset(u, 0, sizeof(*u));
	u->wr_id = wc->wr_id;
	u->status = wc->status;
	u->opcode = wc->opcode;
	u->vendor_err = wc->vendor_err;
	u->byte_len = wc->byte_len;
	u->ex.imm_data = wc->ex.imm_data;
	u->qp_num = wc->qp->qp_num;
	u->src_qp = wc->src_qp;
	/* only what libibverbs reads the same way; the rest are kernel-only */
	u->wc_flags = wc->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM);
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		u->wc_flags |= SROCE_UWC_WITH_INV;
	u->pkey_index = wc->pkey_index;
	u->sl = wc->sl;
	u->port_num = wc->port_num;
}

/*
 * Add one completion.  Returns 0, SROCE_CQ_NOTIFY when the consumer's
 * completion handler is due, SROCE_CQ_OVERFLOW when the CQ is full (the
 * completion is lost and the affiliated CQ error is due), or SROCE_CQ_LOST
 * when it is lost to a CQ that had overflowed before: a user CQ in error
 * takes nothing more, so its consumer finds only what was there
 * (10.8.5.2).  A kernel CQ takes completions again once it has room:
 * ib_drain_qp(), which kernel consumers tear down with, waits for a
 * flush completion, and a pooled CQ outlives its consumer.  A flush
 * posts into a slot it @reserved (sroce_cq_reserve).  The caller raises
 * the handler or the error with sroce_cq_raise() once it holds no locks.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited,
		  bool reserved)
{
	unsigned long flags;
	bool notify;
	void *slot;

	spin_lock_irqsave(&cq->lock, flags);
	if (reserved) {
		cq->reserved--;
	} else if (unlikely((cq->overflow && cq->user) || !sroce_cq_room(cq))) {
		bool first = !cq->overflow;

		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_count(to_sdev(cq->ibcq.device), SROCE_CNT_CQ_OVERFLOW);
		return first ? SROCE_CQ_OVERFLOW : SROCE_CQ_LOST;
	}
	slot = sroce_queue_slot(&cq->q, cq->prod);
	if (cq->user)
		sroce_wc_to_uwc(slot, wc);
	else
		memcpy(slot, wc, sizeof(*wc));
	cq->prod++;
	sroce_queue_publish_prod(&cq->q, cq->prod);
	notify = cq->notify == IB_CQ_NEXT_COMP ||
		 (cq->notify == IB_CQ_SOLICITED &&
		  (solicited || wc->status != IB_WC_SUCCESS));
	if (notify)
		cq->notify = 0;
	spin_unlock_irqrestore(&cq->lock, flags);
	return notify ? SROCE_CQ_NOTIFY : 0;
}

/* Consumer callbacks for a CQ; never called with a driver lock held. */
void sroce_cq_raise(struct sroce_cq *cq, bool comp, bool err)
{
	if (err && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (comp && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int sroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;

	if (cq->user)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->cons != cq->prod) {
		memcpy(&wc[n++], sroce_queue_slot(&cq->q, cq->cons),
		       sizeof(*wc));
		cq->cons++;
	}
	if (n && unlikely(!list_empty(&cq->waiters)))
		sroce_cq_wake(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqf;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqf);
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (cq->prod & cq->q.mask) != sroce_cq_cons(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqf);
	return ret;
}
