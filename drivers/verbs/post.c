// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests.  Kernel WRs are validated and stored as kernel
 * WQEs directly; user WQEs are copied out of the shared ring once, then the
 * copy is validated and used.  The rings themselves are never re-read.
 */
#include <linux/slab.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

static bool sroce_wr_opcode_ok(const struct sroce_qp *qp, u32 opcode)
{
	switch (qp->type) {
	case IB_QPT_RC:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
		       opcode == IB_WR_RDMA_WRITE ||
		       opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		       opcode == IB_WR_RDMA_READ ||
		       opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
	case IB_QPT_UC:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
		       opcode == IB_WR_RDMA_WRITE ||
		       opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM;
	default:
		return false;
	}
}

static void sroce_wqe_reset_progress(struct sroce_swqe *wqe)
{
	wqe->state = SROCE_WQE_PENDING;
	wqe->status = IB_WC_SUCCESS;
	wqe->sent = 0;
	wqe->cur_sge = 0;
	wqe->sge_off = 0;
	wqe->rcvd = 0;
	wqe->npkts = 0;
}

/* Sum of SGE lengths, or -EINVAL if it exceeds the 2^31 message limit. */
static int sroce_sge_total(const struct sroce_sge *sge, u32 n, u32 *total)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < n; i++)
		len += sge[i].length;
	if (len > (1U << 31))
		return -EINVAL;
	*total = len;
	return 0;
}

static int sroce_wqe_from_wr(struct sroce_qp *qp, struct sroce_swqe *wqe,
			     const struct ib_send_wr *wr)
{
	u32 i, off = 0;
	int err;

	if (!sroce_wr_opcode_ok(qp, wr->opcode))
		return -EINVAL;
	if (wr->num_sge < 0 || (u32)wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	sroce_wqe_reset_progress(wqe);
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	wqe->imm_data = (__force u32)wr->ex.imm_data;
	wqe->num_sge = wr->num_sge;
	wqe->is_inline = !!(wr->send_flags & IB_SEND_INLINE);
	if (wqe->is_inline) {
		for (i = 0; i < wqe->num_sge; i++) {
			u32 n = wr->sg_list[i].length;

			if (n > qp->sq.max_inline - off)
				return -EINVAL;
			memcpy(wqe->inline_data + off,
			       (void *)(uintptr_t)wr->sg_list[i].addr, n);
			off += n;
		}
		wqe->length = off;
	} else {
		for (i = 0; i < wqe->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		err = sroce_sge_total(wqe->sge, wqe->num_sge, &wqe->length);
		if (err)
			return err;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (wqe->length < 8 || wqe->is_inline)
			return -EINVAL;
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->compare_add = atomic_wr(wr)->compare_add;
		wqe->swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if (sroce_qp_is_ud(qp)) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		if (!ud->ah || ud->ah->pd != qp->ibqp.pd)
			return -EINVAL;
		wqe->av = to_sah(ud->ah)->ent->av;
		wqe->remote_qpn = ud->remote_qpn & SROCE_QPN_MASK;
		wqe->remote_qkey = ud->remote_qkey;
	}
	return 0;
}

/* Validate a copy of a user WQE; on failure the WQE completes in error. */
static int sroce_wqe_from_user(struct sroce_qp *qp, struct sroce_swqe *wqe,
			       const struct sroce_abi_send_wqe *slot)
{
	struct sroce_abi_send_wqe u;
	u32 len;
	int err;

	memcpy(&u, slot, sizeof(u));
	sroce_wqe_reset_progress(wqe);
	wqe->wr_id = u.wr.wr_id;
	wqe->opcode = u.wr.opcode;
	wqe->send_flags = u.wr.send_flags;
	wqe->imm_data = (__force u32)u.wr.ex.imm_data;
	wqe->num_sge = u.dma.num_sge;
	wqe->is_inline = !!(wqe->send_flags & IB_SEND_INLINE);
	wqe->length = 0;
	if (!sroce_wr_opcode_ok(qp, wqe->opcode))
		return -EINVAL;
	if (wqe->is_inline) {
		len = u.dma.length;
		if (len > qp->sq.max_inline)
			return -EINVAL;
		memcpy(wqe->inline_data, slot->dma.inline_data, len);
		wqe->length = len;
	} else {
		if (wqe->num_sge > qp->sq.max_sge)
			return -EINVAL;
		memcpy(wqe->sge, slot->dma.sge,
		       wqe->num_sge * sizeof(struct sroce_sge));
		err = sroce_sge_total(wqe->sge, wqe->num_sge, &wqe->length);
		if (err)
			return err;
	}
	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = u.wr.wr.rdma.remote_addr;
		wqe->rkey = u.wr.wr.rdma.rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (wqe->length < 8 || wqe->is_inline)
			return -EINVAL;
		wqe->remote_addr = u.wr.wr.atomic.remote_addr;
		wqe->rkey = u.wr.wr.atomic.rkey;
		wqe->compare_add = u.wr.wr.atomic.compare_add;
		wqe->swap = u.wr.wr.atomic.swap;
		break;
	default:
		break;
	}
	if (sroce_qp_is_ud(qp)) {
		wqe->remote_qpn = u.wr.wr.ud.remote_qpn & SROCE_QPN_MASK;
		wqe->remote_qkey = u.wr.wr.ud.remote_qkey;
		err = sroce_ah_lookup_av(qp->sdev, u.wr.wr.ud.ah_num,
					 qp->ibqp.pd, &wqe->av);
		if (err)
			return err;
	}
	return 0;
}

/* Copy newly posted user WQEs into kernel memory.  Caller holds sq.lock. */
void sroce_sq_fetch(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	u32 prod;

	if (!qp->user)
		return;
	prod = sroce_queue_user_prod(&sq->q);
	while ((sq->head & sq->q.mask) != prod &&
	       sq->head - sq->comp < sq->max_wr) {
		struct sroce_swqe *wqe = &sq->kwqe[sq->head & (sq->slots - 1)];

		if (sroce_wqe_from_user(qp, wqe,
					sroce_queue_slot(&sq->q, sq->head))) {
			wqe->state = SROCE_WQE_DONE;
			wqe->status = IB_WC_LOC_QP_OP_ERR;
		}
		sq->head++;
	}
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_sq *sq = &qp->sq;
	unsigned long flags;
	enum ib_qp_state state;
	int err = 0;

	if (qp->user) {
		/* librxe's doorbell: a post_send command with no WRs */
		state = READ_ONCE(qp->state);
		if (state < IB_QPS_RTS)
			return -EINVAL;
		sroce_req_kick(qp);
		return 0;
	}
	spin_lock_irqsave(&sq->lock, flags);
	state = qp->state;
	if (state < IB_QPS_RTS) {
		err = -EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		struct sroce_swqe *wqe;

		if (sq->head - sq->comp >= sq->max_wr) {
			err = -ENOMEM;
			break;
		}
		wqe = &sq->kwqe[sq->head & (sq->slots - 1)];
		err = sroce_wqe_from_wr(qp, wqe, wr);
		if (err)
			break;
		sq->head++;
	}
	if (err)
		*bad_wr = wr;
out:
	spin_unlock_irqrestore(&sq->lock, flags);
	if (state == IB_QPS_ERR)
		sroce_qp_flush(qp);
	else if (state >= IB_QPS_RTS)
		sroce_req_kick(qp);
	return err;
}

/* Append kernel receive WRs to a kernel RQ/SRQ.  Caller holds rq->lock. */
int sroce_rq_post_kernel(struct sroce_rq *rq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	int err = 0;

	for (; wr; wr = wr->next) {
		struct sroce_rwqe *rwqe;
		int i;

		if (rq->prod - rq->cons >= rq->max_wr) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (u32)wr->num_sge > rq->max_sge) {
			err = -EINVAL;
			break;
		}
		rwqe = &rq->krwqe[rq->prod & (rq->slots - 1)];
		rwqe->wr_id = wr->wr_id;
		rwqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			rwqe->sge[i].addr = wr->sg_list[i].addr;
			rwqe->sge[i].length = wr->sg_list[i].length;
			rwqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		err = sroce_sge_total(rwqe->sge, rwqe->num_sge, &rwqe->length);
		if (err)
			break;
		rq->prod++;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_rq *rq = &qp->rq;
	unsigned long flags;
	bool flush;
	int err = 0;

	if (qp->user)
		return -EOPNOTSUPP;
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&rq->lock, flags);
	if (qp->state == IB_QPS_RESET) {
		spin_unlock_irqrestore(&rq->lock, flags);
		*bad_wr = wr;
		return -EINVAL;
	}
	err = sroce_rq_post_kernel(rq, wr, bad_wr);
	flush = qp->state == IB_QPS_ERR;
	spin_unlock_irqrestore(&rq->lock, flags);
	if (flush)
		sroce_qp_flush(qp);
	return err;
}

/*
 * Take the next receive WQE of @rq as a validated kernel copy.  Caller
 * holds rq->lock.  Returns 0, -ENOENT when empty, -EINVAL for a malformed
 * user WQE (which is consumed).
 */
int sroce_rq_take(struct sroce_rq *rq, bool user, struct sroce_rwqe *out)
{
	struct sroce_abi_recv_wqe u;
	const struct sroce_abi_recv_wqe *slot;

	if (!user) {
		if (rq->cons == rq->prod)
			return -ENOENT;
		*out = rq->krwqe[rq->cons & (rq->slots - 1)];
		rq->cons++;
		return 0;
	}
	if ((rq->cons & rq->q.mask) == sroce_queue_user_prod(&rq->q))
		return -ENOENT;
	slot = sroce_queue_slot(&rq->q, rq->cons);
	memcpy(&u, slot, sizeof(u));
	rq->cons++;
	sroce_queue_publish_cons(&rq->q, rq->cons);
	out->wr_id = u.wr_id;
	out->num_sge = u.dma.num_sge;
	if (out->num_sge > rq->max_sge) {
		out->num_sge = 0;
		return -EINVAL;
	}
	memcpy(out->sge, slot->dma.sge, out->num_sge * sizeof(out->sge[0]));
	return sroce_sge_total(out->sge, out->num_sge, &out->length);
}

/* Next receive WQE for a QP, from its SRQ if it has one.  Holds rq.lock. */
int sroce_rq_fetch(struct sroce_qp *qp, struct sroce_rwqe *out)
{
	struct sroce_srq *srq = qp->srq;
	int err;

	if (!srq)
		return sroce_rq_take(&qp->rq, qp->user, out);
	spin_lock(&srq->rq.lock);
	err = sroce_rq_take(&srq->rq, srq->user, out);
	sroce_srq_check_limit(srq);
	spin_unlock(&srq->rq.lock);
	return err;
}

/* Caller holds rq.lock; QP is in the error state. */
void sroce_qp_flush_rq(struct sroce_qp *qp)
{
	struct sroce_rwqe rwqe;
	struct ib_wc wc;
	int err;

	if (qp->srq)
		return;
	for (;;) {
		err = sroce_rq_take(&qp->rq, qp->user, &rwqe);
		if (err == -ENOENT)
			break;
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = rwqe.wr_id;
		wc.status = IB_WC_WR_FLUSH_ERR;
		wc.opcode = IB_WC_RECV;
		wc.qp = &qp->ibqp;
		wc.port_num = 1;
		if (sroce_cq_post(qp->rcq, &wc, false))
			break;
	}
}
