// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring consumers: the engine takes send WQEs from a user ring and receive
 * WQEs from a receive queue or SRQ, always as validated kernel copies, and
 * flushes them when the QP is in error.  Work per call is bounded: the
 * indices it reads are user-writable.
 */
#include "sroce/transport.h"

/*
 * Copy up to @max newly posted user WQEs into kernel memory.  Returns true
 * when more were posted than it took.
 */
bool sroce_sq_fetch(struct sroce_qp *qp, u32 max)
{
	struct sroce_sq *sq = &qp->sq;
	u32 prod;

	sroce_assert_engine(qp);
	prod = sroce_queue_user_prod(&sq->q);
	while ((sq->head & sq->q.mask) != prod &&
	       sq->head - sq->comp < sq->max_wr) {
		struct sroce_swqe *wqe = &sq->kwqe[sq->head & (sq->slots - 1)];

		if (!max--)
			return true;
		if (sroce_wqe_from_user(qp, wqe,
					sroce_queue_slot(&sq->q, sq->head))) {
			wqe->state = SROCE_WQE_DONE;
			wqe->status = IB_WC_LOC_QP_OP_ERR;
		}
		sq->head++;
	}
	/* posted and rung, but no room yet: whoever frees room fetches them */
	qp->sq_fetch_owed = (sq->head & sq->q.mask) != prod;
	return false;
}

/*
 * Take the next receive WQE of @rq as a validated kernel copy.  Caller
 * holds rq->lock.  Returns 0, -ENOENT when empty, -EINVAL for a malformed
 * user WQE (which is consumed).
 */
static int sroce_rq_take(struct sroce_rq *rq, bool user, struct sroce_rwqe *out)
{
	struct sroce_abi_recv_wqe u;
	const struct sroce_abi_recv_wqe *slot;
	int err = 0;

	lockdep_assert_held(&rq->lock);
	if (!user) {
		if (rq->cons == rq->prod)
			return -ENOENT;
		*out = rq->krwqe[rq->cons & (rq->slots - 1)];
		rq->cons++;
		return 0;
	}
	if (sroce_rq_user_empty(rq))
		return -ENOENT;
	slot = sroce_queue_slot(&rq->q, rq->cons);
	memcpy(&u, slot, sizeof(u));
	out->wr_id = u.wr_id;
	out->num_sge = u.dma.num_sge;
	if (out->num_sge > rq->max_sge) {
		out->num_sge = 0;
		out->length = 0;
		err = -EINVAL;
	} else {
		memcpy(out->sge, slot->dma.sge,
		       out->num_sge * sizeof(out->sge[0]));
		err = sroce_sge_total(out->sge, out->num_sge, &out->length);
	}
	/* only now may the provider reuse the slot */
	rq->cons++;
	sroce_queue_publish_cons(&rq->q, rq->cons);
	return err;
}

/* Next receive WQE for a QP, from its SRQ if it has one. */
int sroce_rq_fetch(struct sroce_qp *qp, struct sroce_rwqe *out)
{
	struct sroce_srq *srq = qp->srq;
	unsigned long flags;
	int err;

	sroce_assert_engine(qp);
	if (!srq) {
		spin_lock_irqsave(&qp->rq.lock, flags);
		err = sroce_rq_take(&qp->rq, qp->user, out);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		return err;
	}
	spin_lock_irqsave(&srq->rq.lock, flags);
	err = sroce_rq_take(&srq->rq, srq->user, out);
	qp->nt.srq_limit |= sroce_srq_check_limit(srq);
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

static void sroce_flush_rwqe(struct sroce_qp *qp, u64 wr_id)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.port_num = 1,
	};

	sroce_post_rcq(qp, &wc, false);
}

/*
 * QP in error: flush the receive WQE the responder holds and, a bounded
 * number per pass, the receive queue.  Returns true when more remain.
 */
bool sroce_qp_flush_rq(struct sroce_qp *qp)
{
	struct sroce_rwqe rwqe;
	u32 n = SROCE_FLUSH_BUDGET;
	int err;

	sroce_assert_engine(qp);
	/* a kernel CQ with no room: the WQEs wait for the next poll */
	if (qp->resp.have_rwqe) {
		if (!sroce_flush_room(qp, true))
			return false;
		qp->resp.have_rwqe = false;
		sroce_flush_rwqe(qp, qp->resp.rwqe.wr_id);
	}
	if (qp->srq)
		return false;
	while (n--) {
		unsigned long flags;

		/*
		 * Room only for a WQE that is there (a slot held for nothing
		 * could overflow the CQ under another QP), so look, reserve
		 * and take under one hold: the lock orders a post's prod++
		 * before its look at the state.  A user QP's CQ never
		 * reserves; its take says whether there was one.
		 */
		spin_lock_irqsave(&qp->rq.lock, flags);
		if (!qp->user && qp->rq.prod == qp->rq.cons)
			err = -ENOENT;
		else if (!sroce_flush_room(qp, true))
			err = -ENOSPC;
		else
			err = sroce_rq_take(&qp->rq, qp->user, &rwqe);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		if (err == -ENOENT || err == -ENOSPC)
			return false;
		sroce_flush_rwqe(qp, rwqe.wr_id);
	}
	return true;
}
