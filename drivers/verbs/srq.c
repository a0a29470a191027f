// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues.  A user SRQ is a ring in the rxe layout; a kernel
 * SRQ is an array of kernel receive WQEs.  Either can be resized with the
 * WQEs posted and not yet taken kept in order.
 */
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_abi_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct sroce_rq *rq = &srq->rq;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR ||
	    !attr->max_sge || attr->max_sge > SROCE_MAX_SGE ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->n_srq) > SROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_cnt;
	}
	srq->sdev = sdev;
	srq->user = !!udata;
	srq->srq_num = atomic_inc_return(&sdev->srq_next) & 0xffffff;
	srq->limit = attr->srq_limit;
	spin_lock_init(&rq->lock);
	mutex_init(&srq->resize_mutex);
	rq->slots = roundup_pow_of_two(attr->max_wr + 1);
	rq->max_wr = rq->slots - 1;
	rq->max_sge = attr->max_sge;
	if (srq->user) {
		err = sroce_queue_init(sdev, &rq->q, attr->max_wr,
				       sizeof(struct sroce_abi_recv_wqe) +
				       rq->max_sge *
				       sizeof(struct sroce_abi_sge));
		if (err)
			goto err_cnt;
		err = sroce_queue_map(&rq->q, sroce_udata_uctx(udata), &resp.mi);
		if (!err) {
			resp.srq_num = srq->srq_num;
			err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		}
		if (err)
			goto err_q;
	} else {
		rq->krwqe = kvcalloc(rq->slots, sizeof(*rq->krwqe), GFP_KERNEL);
		if (!rq->krwqe) {
			err = -ENOMEM;
			goto err_cnt;
		}
	}
	attr->max_wr = rq->max_wr;
	return 0;

err_q:
	sroce_queue_free(&rq->q);
err_cnt:
	atomic_dec(&sdev->n_srq);
	return err;
}

/* The WQEs of @rq at [from, from + n), copied to the start-relative @to. */
static void sroce_srq_copy(struct sroce_srq *srq, struct sroce_queue *nq,
			   struct sroce_rwqe *nk, u32 nslots, u32 to, u32 from,
			   u32 n)
{
	struct sroce_rq *rq = &srq->rq;
	u32 i;

	for (i = 0; i < n; i++) {
		if (srq->user)
			memcpy(sroce_queue_slot(nq, to + i),
			       sroce_queue_slot(&rq->q, from + i),
			       rq->q.elem_size);
		else
			nk[(to + i) & (nslots - 1)] =
				rq->krwqe[(from + i) & (rq->slots - 1)];
	}
}

/*
 * A new ring (user) or array (kernel) of @max_wr; the WQEs not yet taken
 * move to its start, in order.  librxe holds its SRQ lock across the call
 * and maps the new ring from the mmap info we write to the address its
 * command names; the old ring lives until it unmaps it.  The bulk is
 * copied outside rq->lock (the resize mutex keeps the old ring); under it
 * only what was posted meanwhile, and the WQEs the engine took meanwhile
 * are skipped by starting the new consumer index past them.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    const struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_rq *rq = &srq->rq;
	struct sroce_abi_modify_srq_cmd cmd;
	struct sroce_abi_mmap_info mi = {};
	struct sroce_rwqe *nk = NULL, *ok = NULL;
	struct sroce_queue nq = {}, oq = {};
	u32 slots = roundup_pow_of_two(max_wr + 1), n, d, done, cons0, prod0;
	unsigned long flags;
	u32 limit;
	int err;

	if (srq->user) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
		err = sroce_queue_init(srq->sdev, &nq, max_wr,
				       sizeof(struct sroce_abi_recv_wqe) +
				       rq->max_sge *
				       sizeof(struct sroce_abi_sge));
		if (err)
			return err;
		err = sroce_queue_map(&nq, sroce_udata_uctx(udata), &mi);
		if (!err && copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr),
					 &mi, sizeof(mi)))
			err = -EFAULT;
		if (err)
			goto out;
	} else {
		nk = kvcalloc(slots, sizeof(*nk), GFP_KERNEL);
		if (!nk)
			return -ENOMEM;
	}
	mutex_lock(&srq->resize_mutex);
	spin_lock_irqsave(&rq->lock, flags);
	cons0 = rq->cons;
	prod0 = srq->user ? sroce_queue_user_prod(&rq->q) : rq->prod;
	n = srq->user ? (prod0 - cons0) & rq->q.mask : prod0 - cons0;
	limit = (mask & IB_SRQ_LIMIT) ? attr->srq_limit : srq->limit;
	spin_unlock_irqrestore(&rq->lock, flags);
	/* o10-10.2.2: not below the WQEs posted, nor below the limit */
	err = -EINVAL;
	if (n > max_wr || limit > max_wr)
		goto out_unlock;
	sroce_srq_copy(srq, &nq, nk, slots, 0, cons0, n);

	spin_lock_irqsave(&rq->lock, flags);
	done = rq->cons - cons0;
	d = srq->user ? (sroce_queue_user_prod(&rq->q) - prod0) & rq->q.mask :
			rq->prod - prod0;
	limit = (mask & IB_SRQ_LIMIT) ? attr->srq_limit : srq->limit;
	/* librxe posts nothing while it resizes: a user ring that moved is not its */
	if ((srq->user && d) || done > n)
		err = -EAGAIN;
	if (err == -EAGAIN || n + d > max_wr || limit > max_wr) {
		spin_unlock_irqrestore(&rq->lock, flags);
		goto out_unlock;
	}
	sroce_srq_copy(srq, &nq, nk, slots, n, prod0, d);
	if (srq->user) {
		oq = rq->q;
		rq->q = nq;
		nq = (struct sroce_queue){};
		sroce_queue_publish_cons(&rq->q, done);
		sroce_queue_publish_prod(&rq->q, n + d);
	} else {
		ok = rq->krwqe;
		rq->krwqe = nk;
		nk = NULL;
		rq->prod = n + d;
	}
	rq->cons = done;
	rq->slots = slots;
	rq->max_wr = slots - 1;
	srq->limit = limit;
	spin_unlock_irqrestore(&rq->lock, flags);
	err = 0;
out_unlock:
	mutex_unlock(&srq->resize_mutex);
out:
	if (nq.buf)
		sroce_queue_free(&nq);
	if (oq.buf)
		sroce_queue_free(&oq);
	kvfree(nk);
	kvfree(ok);
	return err;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR)
			return -EINVAL;
		return sroce_srq_resize(srq, attr->max_wr, attr, mask, udata);
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->rq.lock, flags);
		if (attr->srq_limit > srq->rq.max_wr) {
			spin_unlock_irqrestore(&srq->rq.lock, flags);
			return -EINVAL;
		}
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (srq->rq.q.buf)
		sroce_queue_free(&srq->rq.q);
	kvfree(srq->rq.krwqe);
	atomic_dec(&srq->sdev->n_srq);
	return 0;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err;

	if (srq->user) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&srq->rq.lock, flags);
	err = sroce_rq_post_kernel(&srq->rq, wr, bad_wr);
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

/*
 * Disarm the limit once fewer WQEs remain; true means the caller raises
 * IB_EVENT_SRQ_LIMIT_REACHED after dropping its locks.  Holds srq->rq.lock.
 */
bool sroce_srq_check_limit(struct sroce_srq *srq)
{
	struct sroce_rq *rq = &srq->rq;
	u32 left;

	lockdep_assert_held(&rq->lock);
	if (!srq->limit)
		return false;
	if (srq->user)
		left = (sroce_queue_user_prod(&rq->q) - rq->cons) & rq->q.mask;
	else
		left = rq->prod - rq->cons;
	if (left >= srq->limit)
		return false;
	srq->limit = 0;
	return true;
}
