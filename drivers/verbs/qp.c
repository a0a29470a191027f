// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the modify state machine (transition table from
 * the wire codec), query, destroy, and the error/flush semantics.
 */
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/cred.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"
#include "sroce/wire/udp.h"
#include "sroce/trace.h"

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->done);
}

static int sroce_qp_check_cap(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_recv_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_recv_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int sroce_qp_alloc_queues(struct sroce_dev *sdev, struct sroce_qp *qp,
				 struct ib_qp_cap *cap)
{
	u32 sq_wr = max_t(u32, cap->max_send_wr, 1);
	u32 rq_wr = max_t(u32, cap->max_recv_wr, 1);
	u32 sq_data = max_t(u32, cap->max_send_sge * sizeof(struct sroce_abi_sge),
			    cap->max_inline_data);
	int err;

	qp->sq.slots = roundup_pow_of_two(sq_wr + 1);
	qp->sq.max_wr = qp->sq.slots - 1;
	qp->sq.max_sge = max_t(u32, cap->max_send_sge, 1);
	qp->sq.max_inline = cap->max_inline_data;
	qp->sq.kwqe = kvcalloc(qp->sq.slots, sizeof(*qp->sq.kwqe), GFP_KERNEL);
	if (!qp->sq.kwqe)
		return -ENOMEM;
	if (qp->user) {
		sq_data = max_t(u32, sq_data, qp->sq.max_sge *
					      sizeof(struct sroce_abi_sge));
		err = sroce_queue_init(sdev, &qp->sq.q, sq_wr,
				       sizeof(struct sroce_abi_send_wqe) + sq_data);
		if (err)
			return err;
		/* the ring may hold more inline bytes than we accept: cap it */
		qp->sq.max_inline = min_t(u32, SROCE_MAX_INLINE,
					  qp->sq.q.elem_size -
					  sizeof(struct sroce_abi_send_wqe));
	}

	if (qp->srq) {
		/* receives come from the SRQ: no receive queue of its own */
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		qp->rq.slots = roundup_pow_of_two(rq_wr + 1);
		qp->rq.max_wr = qp->rq.slots - 1;
		qp->rq.max_sge = max_t(u32, cap->max_recv_sge, 1);
		if (qp->user)
			err = sroce_queue_init(sdev, &qp->rq.q, rq_wr,
					       sizeof(struct sroce_abi_recv_wqe) +
					       qp->rq.max_sge *
					       sizeof(struct sroce_abi_sge));
		else
			err = (qp->rq.krwqe = kvcalloc(qp->rq.slots,
						       sizeof(*qp->rq.krwqe),
						       GFP_KERNEL)) ? 0 : -ENOMEM;
		if (err)
			return err;
	}
	qp->resp.res = kcalloc(SROCE_MAX_RD_ATOMIC, sizeof(*qp->resp.res),
			       GFP_KERNEL);
	return qp->resp.res ? 0 : -ENOMEM;
}

static void sroce_qp_free_queues(struct sroce_qp *qp)
{
	if (qp->sq.q.buf)
		sroce_queue_free(&qp->sq.q);
	if (qp->rq.q.buf)
		sroce_queue_free(&qp->rq.q);
	kvfree(qp->sq.kwqe);
	kvfree(qp->rq.krwqe);
	kfree(qp->resp.res);
}

/*
 * The attributes of a new QP (zero, a 1024-byte path MTU, no path).  C10-21:
 * Reset gives them back, so a QP used again starts where a new one would;
 * transitions to Reset carry no attributes.
 */
static void sroce_qp_attr_reset(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->dest_qpn, 0);
	qp->qkey = 0;
	qp->pkey_index = 0;
	qp->access = 0;
	qp->path_mtu = IB_MTU_1024;
	WRITE_ONCE(qp->mtu, 1024);
	qp->timeout = 0;
	qp->retry_cnt = 0;
	qp->rnr_retry = 0;
	qp->min_rnr_timer = 0;
	qp->max_rd_atomic = 0;
	qp->max_dest_rd_atomic = 0;
	qp->av_valid = false;
	memset(&qp->av, 0, sizeof(qp->av));
	dst_cache_reset(&qp->dst_cache);
	qp->sqd_notify = false;
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_abi_create_qp_resp resp = {};
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags & ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK)
		return -EOPNOTSUPP;
	/* only a UD QP sends to a multicast group */
	if ((init->create_flags & IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) &&
	    init->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	err = sroce_qp_check_cap(init);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->n_qp) > SROCE_MAX_QP) {
		atomic_dec(&sdev->n_qp);
		return -ENOMEM;
	}

	qp->sdev = sdev;
	RCU_INIT_POINTER(qp->cnt, &sdev->cnt);
	qp->user = !!udata;
	if (udata)
		qp->owner = current_euid();
	qp->type = init->qp_type;
	qp->state = IB_QPS_RESET;
	qp->pd = to_spd(ibqp->pd);
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->recv_pd = qp->srq ? to_spd(init->srq->pd) : qp->pd;
	qp->sq_sig_type = init->sq_sig_type;
	qp->block_mc_loop = !!(init->create_flags &
			       IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->done);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	sroce_qp_engine_init(qp);

	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_cnt;
	sroce_qp_attr_reset(qp);
	err = sroce_qp_alloc_queues(sdev, qp, &init->cap);
	if (err)
		goto err_free;

	/* reserve the QPN; the QP becomes visible to packets only when built */
	if (qp->type == IB_QPT_GSI) {
		qpn = SROCE_GSI_QPN;
		err = xa_insert(&sdev->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		/* 0xffffff is the multicast QPN: never hand it out */
		err = xa_alloc_cyclic(&sdev->qp_xa, &qpn, NULL,
				      XA_LIMIT(SROCE_FIRST_QPN, SROCE_QPN_MASK - 1),
				      &sdev->qp_next, GFP_KERNEL);
		if (err > 0)
			err = 0;
	}
	if (err)
		goto err_free;
	qp->qpn = qpn;
	ibqp->qp_num = qpn;
	qp->serial = atomic64_inc_return(&sdev->qp_serial);

	if (udata) {
		struct ib_ucontext *uctx = sroce_udata_uctx(udata);

		err = qp->srq ? 0 : sroce_queue_map(&qp->rq.q, uctx,
						     &resp.rq_mi);
		if (!err)
			err = sroce_queue_map(&qp->sq.q, uctx, &resp.sq_mi);
		if (!err)
			err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}
	init->cap.max_send_wr = qp->sq.max_wr;
	init->cap.max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	init->cap.max_send_sge = qp->sq.max_sge;
	init->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	init->cap.max_inline_data = qp->sq.max_inline;

	xa_store(&sdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_xa:
	xa_erase(&sdev->qp_xa, qpn);
err_free:
	sroce_qp_free_queues(qp);
	dst_cache_destroy(&qp->dst_cache);
err_cnt:
	atomic_dec(&sdev->n_qp);
	return err;
}

/* Caller holds eng_lock, so the engine is idle; posters are fenced here. */
static void sroce_qp_reset_locked(struct sroce_qp *qp)
{
	unsigned long flags;

	sroce_qp_reset_engine(qp);
	sroce_qp_attr_reset(qp);
	spin_lock_irqsave(&qp->sq.lock, flags);
	spin_lock(&qp->rq.lock);
	qp->sq.head = 0;
	qp->sq.req = 0;
	qp->sq.comp = 0;
	qp->rq.prod = 0;
	qp->rq.cons = 0;
	if (qp->user) {
		/* the provider resets its view of the rings on reset too */
		qp->sq.q.buf->producer_index = 0;
		qp->sq.q.buf->consumer_index = 0;
		if (qp->rq.q.buf) {
			qp->rq.q.buf->producer_index = 0;
			qp->rq.q.buf->consumer_index = 0;
		}
	}
	spin_unlock(&qp->rq.lock);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SROCE_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE |
				       SROCE_QP_ACCESS_FLUSH)))
		return -EINVAL;
	if ((mask & IB_QP_ALT_PATH) || (mask & IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;
	return 0;
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	enum ib_qp_state cur, new;
	struct sroce_av av;
	bool sched = false;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	mutex_lock(&qp->eng_lock);
	cur = qp->state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = -EINVAL;
		goto out;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/*
	 * The kernel's transition table; it differs from the spec only in
	 * refusing Reset -> Error, which IBA allows from every state.
	 */
	if (!ib_modify_qp_is_ok(cur, new, qp->type, mask) &&
	    !(cur == IB_QPS_RESET && new == IB_QPS_ERR &&
	      !(mask & ~IB_QP_STATE))) {
		err = -EINVAL;
		goto out;
	}
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	/*
	 * SQD -> RTS only once the send queue has drained, and SQD -> SQD
	 * changes neither the READ/atomic depth nor the path before (10.3.1.5):
	 * READs answered early hold their max_rd_atomic slots till the older
	 * ones complete, and resends go where the AV says.
	 */
	if (cur == IB_QPS_SQD && qp->sq_draining &&
	    (new == IB_QPS_RTS ||
	     (new == IB_QPS_SQD &&
	      (mask & (IB_QP_MAX_QP_RD_ATOMIC | IB_QP_AV | IB_QP_PORT))))) {
		err = -EBUSY;
		goto out;
	}
	if (mask & IB_QP_AV) {
		err = sroce_av_from_attr(sdev, &av, &attr->ah_attr);
		if (err)
			goto out;
	}

	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->sqd_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		qp->av = av;
		qp->av_valid = true;
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & IB_QP_PATH_MTU) {
		enum ib_mtu mtu = min(attr->path_mtu, READ_ONCE(sdev->port_mtu));

		qp->path_mtu = mtu;
		WRITE_ONCE(qp->mtu, ib_mtu_enum_to_int(mtu));
	}
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = max_t(u8, attr->max_rd_atomic, 1);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = max_t(u8, attr->max_dest_rd_atomic, 1);
	if (mask & IB_QP_DEST_QPN)
		WRITE_ONCE(qp->dest_qpn, attr->dest_qp_num);
	if (mask & IB_QP_RQ_PSN) {
		qp->resp.epsn = attr->rq_psn & SROCE_PSN_MASK;
		qp->resp.epsn64 = qp->resp.epsn;
	}
	if (mask & IB_QP_SQ_PSN) {
		qp->req.psn = attr->sq_psn & SROCE_PSN_MASK;
		qp->req.max_psn = qp->req.psn;
		qp->comp.psn = qp->req.psn;
	}
	if (mask & (IB_QP_DEST_QPN | IB_QP_STATE))
		qp->sport = sroce_udp_sport(qp->qpn, qp->dest_qpn);

	if (new != cur) {
		switch (new) {
		case IB_QPS_RESET:
			sroce_qp_reset_locked(qp);
			break;
		case IB_QPS_RTS:
			if (cur == IB_QPS_SQE) {
				sroce_qp_sqe_flush(qp);
				/* its CQ lost a flush completion: the QP ended */
				if (qp->state == IB_QPS_ERR) {
					err = -EIO;
					goto out;
				}
				qp->req.halted = false;
			}
			qp->req.retry_cnt = qp->retry_cnt;
			qp->req.rnr_retry = qp->rnr_retry;
			sched = true;
			break;
		case IB_QPS_RTR:
			sroce_qp_rtr_engine(qp);
			break;
		case IB_QPS_SQD:
			/* the engine raises SQ_DRAINED once nothing is in flight */
			qp->sq_draining = true;
			sched = true;
			break;
		case IB_QPS_ERR:
			/* the engine flushes both queues */
			sched = true;
			break;
		default:
			break;
		}
		if (cur == IB_QPS_SQD)
			qp->sq_draining = false;
		trace_sroce_qp_state(qp, cur, new);
		WRITE_ONCE(qp->state, new);
	}
	/* SQD -> SQD may change it with requests outstanding */
	if ((mask & IB_QP_TIMEOUT) && (new == IB_QPS_RTS || new == IB_QPS_SQD))
		sroce_req_timeout_set(qp);
	if (sched)
		sroce_qp_sched(qp);
out:
	sroce_qp_unlock(qp);
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->eng_lock);
	attr->qp_state = qp->state;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->resp.epsn;
	attr->sq_psn = qp->req.psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = 1;
	attr->sq_draining = qp->sq_draining;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_recv_wr = qp->rq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	if (qp->av_valid)
		sroce_av_to_attr(&qp->av, &attr->ah_attr);
	init->qp_type = qp->type;
	init->send_cq = &qp->scq->ibcq;
	init->recv_cq = &qp->rcq->ibcq;
	init->srq = qp->srq ? &qp->srq->ibsrq : NULL;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->create_flags = qp->block_mc_loop ?
			     IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK : 0;
	sroce_qp_unlock(qp);
	return 0;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;

	mutex_lock(&qp->eng_lock);
	qp->dying = true;
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	sroce_qp_unlock(qp);

	/* unpublish, then wait for lookups that found it */
	xa_erase(&sdev->qp_xa, qp->qpn);
	sroce_mcast_qp_gone(qp);
	sroce_qp_put(qp);
	wait_for_completion(&qp->done);
	sroce_qp_engine_stop(qp);

	sroce_qp_free_queues(qp);
	dst_cache_destroy(&qp->dst_cache);
	atomic_dec(&sdev->n_qp);
	return 0;
}
