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
		       opcode == IB_WR_SEND_WITH_INV ||
		       opcode == IB_WR_RDMA_WRITE ||
		       opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		       opcode == IB_WR_RDMA_READ ||
		       opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		       opcode == IB_WR_ATOMIC_FETCH_AND_ADD ||
		       (SROCE_HAVE_MEM_PLACEMENT &&
			(opcode == SROCE_WR_ATOMIC_WRITE ||
			 opcode == SROCE_WR_FLUSH)) ||
		       sroce_wr_is_local(opcode);
	case IB_QPT_UC:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
		       opcode == IB_WR_RDMA_WRITE ||
		       opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		       sroce_wr_is_local(opcode);
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM;
	default:
		return false;
	}
}

/* Only requests that carry data from the WQE can take it inline. */
static bool sroce_opcode_may_inline(u32 opcode)
{
	return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
	       opcode == IB_WR_SEND_WITH_INV ||
	       opcode == IB_WR_RDMA_WRITE || opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	       (SROCE_HAVE_MEM_PLACEMENT && opcode == SROCE_WR_ATOMIC_WRITE);
}

/* IBA A19: an ATOMIC WRITE carries exactly 8 bytes, to an 8-byte aligned VA. */
#define SROCE_ATOMIC_WRITE_LEN	8

/*
 * REG_MR names its MR by pointer, so only a kernel consumer may post it;
 * the new key may differ from the MR's in its low 8 bits only.
 */
static int sroce_wqe_reg_mr(struct sroce_swqe *wqe, const struct ib_reg_wr *reg)
{
	struct sroce_mr *mr = to_smr(reg->mr);

	if (mr->kind != SROCE_MR_FAST || (reg->key >> 8) != (mr->key >> 8))
		return -EINVAL;
	wqe->reg_key = reg->key;
	wqe->reg_access = reg->access;
	/* as the consumer set them after map_mr_sg (NFS rewrites the iova) */
	wqe->reg_iova = reg->mr->iova;
	wqe->reg_length = reg->mr->length;
	return 0;
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
	wqe->rd_counted = false;
	wqe->no_train = false;
}

/* Sum of SGE lengths, or -EINVAL if it exceeds the 2^31 message limit. */
int sroce_sge_total(const struct sroce_sge *sge, u32 n, u32 *total)
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
	if (wqe->is_inline && !sroce_opcode_may_inline(wr->opcode))
		return -EINVAL;
	wqe->inv_rkey = wr->ex.invalidate_rkey;
	/*
	 * Kernel consumers have no memory windows, and ib_send_wr has no
	 * field for a FLUSH's placement type and selectivity level.
	 */
	if (wr->opcode == IB_WR_BIND_MW ||
	    (SROCE_HAVE_MEM_PLACEMENT && wr->opcode == SROCE_WR_FLUSH))
		return -EINVAL;
	if (sroce_wr_is_local(wr->opcode)) {
		/* local operations move no data */
		wqe->num_sge = 0;
		wqe->length = 0;
		return wr->opcode == IB_WR_REG_MR ?
		       sroce_wqe_reg_mr(wqe, reg_wr(wr)) : 0;
	}
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
		/* the SGE array now holds the data: nothing may walk it */
		wqe->num_sge = 0;
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
#if SROCE_HAVE_MEM_PLACEMENT
	case IB_WR_ATOMIC_WRITE:
		/* the 8 bytes come from the SGEs (or inline), like a WRITE's */
		if (wqe->length != SROCE_ATOMIC_WRITE_LEN)
			return -EINVAL;
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
		break;
#endif
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
int sroce_wqe_from_user(struct sroce_qp *qp, struct sroce_swqe *wqe,
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
	wqe->inv_rkey = u.wr.ex.invalidate_rkey;
	/* REG_MR's MR is a kernel pointer in the rxe ABI: never from user space */
	if (!sroce_wr_opcode_ok(qp, wqe->opcode) || wqe->opcode == IB_WR_REG_MR)
		return -EINVAL;
	if (wqe->opcode == IB_WR_LOCAL_INV) {
		wqe->num_sge = 0;
		return wqe->is_inline ? -EINVAL : 0;
	}
	/* ibv_bind_mw (type 1) and IBV_WR_BIND_MW (type 2) alike */
	if (wqe->opcode == IB_WR_BIND_MW) {
		wqe->num_sge = 0;
		wqe->bind_mw_key = u.wr.wr.mw.mw_rkey;
		wqe->bind_new_key = u.wr.wr.mw.rkey;
		wqe->bind_mr_lkey = u.wr.wr.mw.mr_lkey;
		wqe->bind_access = u.wr.wr.mw.access;
		wqe->bind_va = u.wr.wr.mw.addr;
		wqe->bind_length = u.wr.wr.mw.length;
		return wqe->is_inline ? -EINVAL : 0;
	}
	if (SROCE_HAVE_MEM_PLACEMENT && wqe->opcode == SROCE_WR_ATOMIC_WRITE) {
		/*
		 * librxe puts the 8 bytes in the WQE itself (dma.atomic_wr),
		 * whatever the SGEs say: keep them as inline data.
		 */
		if (u.dma.length != SROCE_ATOMIC_WRITE_LEN)
			return -EINVAL;
		wqe->num_sge = 0;
		wqe->is_inline = true;
		wqe->length = SROCE_ATOMIC_WRITE_LEN;
		memcpy(wqe->inline_data, slot->dma.atomic_wr,
		       SROCE_ATOMIC_WRITE_LEN);
		wqe->remote_addr = u.wr.wr.rdma.remote_addr;
		wqe->rkey = u.wr.wr.rdma.rkey;
		return 0;
	}
	if (SROCE_HAVE_MEM_PLACEMENT && wqe->opcode == SROCE_WR_FLUSH) {
		/*
		 * No payload (oA19-2): the range is the remote one, read where
		 * rdma_rxe reads it (iova, dma.length) since librxe's
		 * ibv_wr_flush() need not fill wr.flush's copies.
		 */
		wqe->num_sge = 0;
		wqe->remote_addr = u.iova;
		wqe->rkey = u.wr.wr.flush.rkey;
		wqe->flush_len = u.dma.length;
		wqe->flush_type = u.wr.wr.flush.type;
		wqe->flush_level = u.wr.wr.flush.level;
		/* the FETH has 4 bits of placement type, 2 of level */
		if (wqe->is_inline || !wqe->flush_type ||
		    (wqe->flush_type & ~0xf) || wqe->flush_level > 3)
			return -EINVAL;
		return 0;
	}
	if (wqe->is_inline) {
		/* num_sge is user data that means nothing for inline WQEs */
		wqe->num_sge = 0;
		if (!sroce_opcode_may_inline(wqe->opcode))
			return -EINVAL;
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

/*
 * librxe wrote these WQEs into the ring before ringing; the doorbell
 * refused them (QP not in RTS), so the consumer was told they failed:
 * they must never run, not even once the QP reaches RTS (C10-25, C10-29).
 */
static void sroce_sq_discard_user(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;

	mutex_lock(&qp->eng_lock);
	/* below RTS the engine has fetched nothing: no WQE is in flight */
	if (qp->state < IB_QPS_RTS && sq->comp == sq->head) {
		sq->head += (sroce_queue_user_prod(&sq->q) - sq->head) &
			    sq->q.mask;
		sq->req = sq->head;
		sq->comp = sq->head;
		sroce_queue_publish_cons(&sq->q, sq->comp);
	}
	sroce_qp_unlock(qp);
}

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_sq *sq = &qp->sq;
	unsigned long flags;
	enum ib_qp_state state;
	int err = 0;

	state = READ_ONCE(qp->state);
	if (qp->user) {
		/* librxe's doorbell: a post_send command with no WRs */
		if (state < IB_QPS_RTS) {
			sroce_sq_discard_user(qp);
			return -EINVAL;
		}
		sroce_qp_kick(qp);
		return 0;
	}
	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&sq->lock, flags);
	for (; wr; wr = wr->next) {
		struct sroce_swqe *wqe;

		/* acquire: the engine is done with a slot once comp passes it */
		if (sq->head - smp_load_acquire(&sq->comp) >= sq->max_wr) {
			err = -ENOMEM;
			break;
		}
		wqe = &sq->kwqe[sq->head & (sq->slots - 1)];
		err = sroce_wqe_from_wr(qp, wqe, wr);
		if (err)
			break;
		/* release: the engine reads the WQE after it sees head */
		smp_store_release(&sq->head, sq->head + 1);
	}
	if (err)
		*bad_wr = wr;
	spin_unlock_irqrestore(&sq->lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		set_bit(SROCE_QPEV_FLUSH, &qp->events);
	sroce_qp_sched(qp);
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
	int err = 0;

	if (qp->user)
		return -EOPNOTSUPP;
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&rq->lock, flags);
	err = sroce_rq_post_kernel(rq, wr, bad_wr);
	spin_unlock_irqrestore(&rq->lock, flags);
	/* in ERR the engine flushes what was just posted */
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		set_bit(SROCE_QPEV_FLUSH, &qp->events);
		sroce_qp_sched(qp);
	}
	return err;
}
