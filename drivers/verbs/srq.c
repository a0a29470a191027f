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

/*
 * A new ring (user) or array (kernel) of @max_wr; under the lock, the WQEs
 * not yet taken move to its start.  librxe holds its SRQ lock across the
 * call and maps the new ring from the mmap info we write to the address
 * its command names; the old ring lives until it unmaps it.
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
	u32 slots = roundup_pow_of_two(max_wr + 1), n, i;
	unsigned long flags;
	int err;

	if (srq->user) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
		err = sroce_queue_init(srq->sdev, &nq, max_wr, rq->q.elem_size);
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
	spin_lock_irqsave(&rq->lock, flags);
	if (srq->user)
		n = (sroce_queue_user_prod(&rq->q) - rq->cons) & rq->q.mask;
	else
		n = rq->prod - rq->cons;
	/* o10-10.2.2: not below the WQEs posted, nor below the limit */
	if (n > max_wr ||
	    ((mask & IB_SRQ_LIMIT) ? attr->srq_limit : srq->limit) > max_wr) {
		spin_unlock_irqrestore(&rq->lock, flags);
		err = -EINVAL;
		goto out;
	}
	if (srq->user) {
		for (i = 0; i < n; i++)
			memcpy(sroce_queue_slot(&nq, i),
			       sroce_queue_slot(&rq->q, rq->cons + i),
			       rq->q.elem_size);
		oq = rq->q;
		rq->q = nq;
		nq = (struct sroce_queue){};
		sroce_queue_publish_prod(&rq->q, n);
	} else {
		for (i = 0; i < n; i++)
			nk[i] = rq->krwqe[(rq->cons + i) & (rq->slots - 1)];
		ok = rq->krwqe;
		rq->krwqe = nk;
		nk = NULL;
		rq->prod = n;
	}
	rq->cons = 0;
	rq->slots = slots;
	rq->max_wr = slots - 1;
	if (mask & IB_SRQ_LIMIT)
		srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&rq->lock, flags);
	err = 0;
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
