// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completer: consumes ACKs, NAKs and read responses for RC requests,
 * places read data, and retires send WQEs into the send CQ in order.
 */
#include <linux/skbuff.h>
#include <linux/jiffies.h>

#include "sroce/transport.h"
#include "sroce/trace.h"

static enum ib_wc_opcode sroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
#if SROCE_HAVE_MEM_PLACEMENT
	/* the same numbers as libibverbs' IBV_WC_ATOMIC_WRITE / IBV_WC_FLUSH */
	case IB_WR_ATOMIC_WRITE:
		return IB_WC_ATOMIC_WRITE;
	case IB_WR_FLUSH:
		return IB_WC_FLUSH;
#endif
	default:
		return IB_WC_SEND;
	}
}

/*
 * Free the WQE's slot, then post its completion: a consumer that posts
 * again from its completion handler must find the slot free (the user
 * ring's consumer index is published first, as librxe checks it).
 */
static void sroce_comp_retire(struct sroce_qp *qp, struct sroce_swqe *wqe,
			      enum ib_wc_status status, bool post)
{
	struct sroce_sq *sq = &qp->sq;
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = sroce_wc_opcode(wqe->opcode),
		.byte_len = wqe->length,
		.qp = &qp->ibqp,
		.port_num = 1,
	};

	sroce_comp_rd_done(qp, wqe);
	/* release: post_send reuses the slot once it sees comp move */
	smp_store_release(&sq->comp, sq->comp + 1);
	if (qp->user)
		sroce_queue_publish_cons(&sq->q, sq->comp);
	if (post)
		sroce_post_scq(qp, &wc);
}

/* An answered WQE, or one sent again, gives its max_rd_atomic slot back. */
void sroce_comp_rd_done(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	if (wqe->rd_counted) {
		wqe->rd_counted = false;
		if (!WARN_ON_ONCE(!qp->req.rd_outstanding))
			qp->req.rd_outstanding--;
	}
}

/* Retire finished WQEs in order. */
void sroce_comp_complete(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	bool failed = false, post;

	sroce_assert_engine(qp);
	/* after an error completion only the flush may retire (10.10.2) */
	if (qp->comp.flush_err)
		return;
	while (sq->comp != sq->req) {
		struct sroce_swqe *wqe = &sq->kwqe[sq->comp & (sq->slots - 1)];

		if (wqe->state != SROCE_WQE_DONE)
			break;
		/* a READ/atomic failed before its answer still held a slot */
		sroce_comp_rd_done(qp, wqe);
		failed = wqe->status != IB_WC_SUCCESS;
		/* a peer may still read our pages: the flush reports it later */
		if (failed && (qp->comp.fail_pending || sroce_qp_zc_busy(qp))) {
			qp->comp.fail_pending = true;
			break;
		}
		post = failed || sroce_wqe_signaled(qp, wqe);
		/* a kernel QP that failed meanwhile: room first, as the flush */
		if (post && !sroce_flush_room(qp, false)) {
			qp->comp.fail_pending |= failed;
			break;
		}
		sroce_comp_retire(qp, wqe, wqe->status, post);
		if (failed) {
			qp->comp.flush_err = qp->type == IB_QPT_RC;
			break;
		}
	}
	/* the completion reports the cause: no affiliated event (10.10.2) */
	if (failed && qp->type == IB_QPT_RC)
		sroce_qp_fail(qp, 0);
	else if (failed)
		sroce_qp_sq_error(qp);
}

/*
 * Error state: complete what is outstanding, a bounded number per pass.
 * Returns true when more remain; user WQEs are fetched up to what the
 * producer index showed when this pass began, never chased.
 */
bool sroce_comp_flush_sq(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	u32 n = SROCE_FLUSH_BUDGET, head;
	bool more = false;

	sroce_assert_engine(qp);
	/* the consumer gets no buffer back while a peer may read it */
	if (sroce_qp_zc_busy(qp))
		return false;
	if (qp->user)
		more = sroce_sq_fetch(qp, SROCE_FLUSH_BUDGET);
	/* acquire: pairs with the release of head in kernel post_send */
	head = smp_load_acquire(&sq->head);
	while (sq->comp != head) {
		struct sroce_swqe *wqe = &sq->kwqe[sq->comp & (sq->slots - 1)];
		enum ib_wc_status st = IB_WC_WR_FLUSH_ERR;
		bool post = true;

		if (!n--) {
			more = true;
			break;
		}
		if (qp->comp.fail_pending)
			/* the failure sroce_comp_complete() held back */
			st = wqe->status;
		else if (wqe->state == SROCE_WQE_DONE && !qp->comp.flush_err &&
			 (wqe->status == IB_WC_SUCCESS ||
			  (!qp->user && qp->type == IB_QPT_RC)))
			/*
			 * Done before the flush got to it.  A kernel RC WQE's
			 * error is the transport's, the first one (flush_err),
			 * when sroce_comp_complete() waited for CQ room; a user
			 * WQE's may be a malformed slot fetched in Error, which
			 * is flushed.
			 */
			st = wqe->status;
		if (st == IB_WC_SUCCESS)
			post = sroce_wqe_signaled(qp, wqe);
		/* a kernel CQ with no room: the WQE waits for the next poll */
		if (post && !sroce_flush_room(qp, false)) {
			more = false;
			break;
		}
		qp->comp.fail_pending = false;
		sroce_comp_retire(qp, wqe, st, post);
		/*
		 * RC: a READ answered after an older WQE that did not complete
		 * (sroce_comp_read_later()) is flushed too, not reported done
		 * after that one's error.  UD and UC keep what they sent.
		 */
		if (st != IB_WC_SUCCESS)
			qp->comp.flush_err = qp->type == IB_QPT_RC;
	}
	sq->req = sq->comp;
	return more;
}

/* The oldest WQE with packets sent and no answer yet, even partly sent. */
struct sroce_swqe *sroce_comp_first_open(struct sroce_qp *qp, u32 *idx)
{
	struct sroce_sq *sq = &qp->sq;
	u32 i, end = sroce_req_sent_end(qp);

	for (i = sq->comp; i != end; i++) {
		struct sroce_swqe *wqe = &sq->kwqe[i & (sq->slots - 1)];

		if (wqe->state != SROCE_WQE_DONE) {
			*idx = i;
			return wqe;
		}
	}
	return NULL;
}

/*
 * Everything through @psn reached the responder.  Sends and writes whose
 * last PSN is covered are done; a read that is covered but still lacks
 * data lost its responses, which sets *retry.
 */
static bool sroce_comp_ack_through(struct sroce_qp *qp, u32 psn, bool *retry)
{
	struct sroce_sq *sq = &qp->sq;
	u32 i, upto = sroce_psn_add(psn, 1);
	/* acquire: a kernel poster publishes head after writing the WQE */
	u32 head = smp_load_acquire(&sq->head);
	bool progress = false;

	/*
	 * Past sq->req too: after a go-back the WQEs being sent again still
	 * have their PSNs, and an ACK of the first transmission completes them
	 * (the requester skips a done WQE).  Waiting for the ACK of the resent
	 * last packet instead hangs when the peer, which has it all, is gone.
	 */
	for (i = sq->comp; i != head; i++) {
		struct sroce_swqe *wqe = &sq->kwqe[i & (sq->slots - 1)];

		if (wqe->state == SROCE_WQE_DONE)
			continue;
		if (!wqe->npkts)
			break;	/* never sent: no PSNs yet */
		if (sroce_wqe_is_rd_atomic(wqe)) {
			/*
			 * Only its answer completes it: the oldest
			 * unacknowledged PSN stays at what it still waits
			 * for, so the answer to a re-request is in the
			 * window.  Covered but unanswered, its answer was
			 * lost.
			 */
			if (!sroce_psn_before(psn, wqe->last_psn) &&
			    wqe->state == SROCE_WQE_SENT)
				*retry = true;
			upto = sroce_psn_add(wqe->first_psn, wqe->rcvd / qp->mtu);
			break;
		}
		/* the ACK is for a PSN sent (sroce_comp_psn_ok): so was last_psn */
		if (sroce_psn_before(psn, wqe->last_psn))
			break;
		wqe->state = SROCE_WQE_DONE;
		progress = true;
	}
	if (sroce_psn_after(upto, qp->comp.psn))
		qp->comp.psn = upto;
	return progress;
}

static enum ib_wc_status sroce_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* A NAK fails the WQE its PSN falls in, and only if that one is the oldest open. */
static bool sroce_comp_fail_open(struct sroce_qp *qp, u32 psn,
				 enum ib_wc_status st)
{
	struct sroce_swqe *wqe;
	u32 idx;

	wqe = sroce_comp_first_open(qp, &idx);
	if (!wqe || !sroce_psn_in_window(psn, wqe->first_psn, wqe->npkts)) {
		sroce_qp_count(qp, SROCE_CNT_RX_STALE_ACK);
		return false;
	}
	wqe->state = SROCE_WQE_DONE;
	wqe->status = st;
	/* a partly sent message ends here: the completer must reach it */
	if (idx == qp->sq.req)
		qp->sq.req++;
	return true;
}

static bool sroce_comp_ack(struct sroce_qp *qp, struct sroce_pkt *pkt,
			   bool *retry)
{
	u8 syn = pkt->h.aeth.syndrome;
	u32 psn = pkt->h.bth.psn;
	u32 prev = sroce_psn_add(psn, SROCE_PSN_MASK);	/* psn - 1 */
	bool progress;
	u32 rnr_us;

	switch (sroce_aeth_type(syn)) {
	case SROCE_AETH_ACK:
		return sroce_comp_ack_through(qp, psn, retry);
	case SROCE_AETH_RNR_NAK:
		progress = sroce_comp_ack_through(qp, prev, retry);
		/* nothing was resent since the last one: this is a copy */
		if (qp->req.rnr_wait && psn == qp->comp.psn) {
			sroce_qp_count(qp, SROCE_CNT_RX_STALE_ACK);
			return progress;
		}
		sroce_qp_count(qp, SROCE_CNT_RNR_RETRY);
		qp->stats.rnr_retry++;
		if (!qp->req.rnr_retry)
			return sroce_comp_fail_open(qp, psn,
						    IB_WC_RNR_RETRY_EXC_ERR) ||
			       progress;
		if (qp->req.rnr_retry != 7)
			qp->req.rnr_retry--;
		sroce_req_rewind(qp, psn);
		*retry = false;
		qp->req.rnr_wait = true;
		rnr_us = sroce_rnr_timer_us(sroce_aeth_value(syn));
		trace_sroce_rnr_wait(qp, psn, rnr_us);
		mod_timer(&qp->rnr_timer, jiffies + usecs_to_jiffies(rnr_us));
		return progress;
	case SROCE_AETH_NAK:
		progress = sroce_comp_ack_through(qp, prev, retry);
		if (sroce_aeth_value(syn) == SROCE_NAK_PSN_SEQ_ERR) {
			/* the responder took everything before @psn */
			*retry = true;
			return progress;
		}
		return sroce_comp_fail_open(qp, psn, sroce_nak_status(
						    sroce_aeth_value(syn))) ||
		       progress;
	default:
		return false;
	}
}

/* Scatter one READ response into the WQE's local SGEs at @off. */
static int sroce_comp_read_place(struct sroce_qp *qp, struct sroce_swqe *wqe,
				 struct sroce_pkt *pkt, u32 off, u32 len)
{
	u32 cur_sge, sge_off;

	sroce_sge_seek(wqe->sge, wqe->num_sge, off, &cur_sge, &sge_off);
	return sroce_sge_copy_in(qp, qp->pd, wqe->sge, wqe->num_sge, &cur_sge,
				 &sge_off, pkt->skb, pkt->payload_off, len);
}

/* LAST brings all that is left from @off; any other one MTU, with more to come */
static bool sroce_comp_read_len_ok(const struct sroce_swqe *wqe,
				   const struct sroce_pkt *pkt, u32 off, u32 mtu)
{
	u32 len = pkt->h.payload_len;

	if (len > mtu)
		return false;
	if (pkt->h.info->mask & SROCE_M_LAST)
		return off + len == wqe->length;
	return len == mtu && off + len < wqe->length;
}

/*
 * A response past the one expected: with reordering on the path it is not
 * a loss yet.  Place it (bounded window, each PSN once) so that asking
 * again is needed only for what really went missing.  Returns true when
 * it was placed.
 */
static bool sroce_comp_read_ahead(struct sroce_qp *qp, struct sroce_swqe *wqe,
				  struct sroce_pkt *pkt, u32 expect, bool *retry)
{
	struct sroce_comp_state *c = &qp->comp;
	u32 psn = pkt->h.bth.psn, mtu = qp->mtu, len = pkt->h.payload_len;
	u32 idx = sroce_psn_diff(psn, wqe->first_psn), off = idx * mtu;

	if (c->ooo_wqe != wqe || c->ooo_first_psn != wqe->first_psn) {
		bitmap_zero(c->ooo, SROCE_READ_OOO_WINDOW);
		c->ooo_wqe = wqe;
		c->ooo_first_psn = wqe->first_psn;
	}
	if (sroce_psn_diff(psn, expect) >= SROCE_READ_OOO_WINDOW) {
		/* that far ahead, what is missing is lost: ask again */
		*retry = true;
		return false;
	}
	idx %= SROCE_READ_OOO_WINDOW;
	if (test_bit(idx, c->ooo) || !sroce_comp_read_len_ok(wqe, pkt, off, mtu))
		return false;
	if (sroce_comp_read_place(qp, wqe, pkt, off, len))
		return false;	/* the in-order copy will fail the WQE */
	__set_bit(idx, c->ooo);
	sroce_qp_count(qp, SROCE_CNT_RX_READ_AHEAD);
	/* the last response is here and the hole is not: ask for it now */
	if (psn == wqe->last_psn)
		*retry = true;
	return true;
}

/*
 * The oldest open WQE, at @idx, is done.  Later ones may have been
 * answered meanwhile (sroce_comp_read_later()): the oldest unacknowledged
 * PSN moves past them too, to what the next open one still waits for, and
 * their max_rd_atomic slots are given back now, in order, as the responder
 * frees its READ resources oldest first.  An open READ or atomic that a
 * later answer has passed lost its own: *retry.
 */
static void sroce_comp_done_open(struct sroce_qp *qp, struct sroce_swqe *wqe,
				 u32 idx, bool *retry)
{
	struct sroce_comp_state *c = &qp->comp;
	struct sroce_sq *sq = &qp->sq;
	u32 next = sroce_psn_add(wqe->last_psn, 1), end = sroce_req_sent_end(qp);

	wqe->state = SROCE_WQE_DONE;
	sroce_comp_rd_done(qp, wqe);
	for (idx++; idx != end; idx++) {
		wqe = &sq->kwqe[idx & (sq->slots - 1)];
		if (!wqe->npkts)
			continue;	/* a local operation: no PSNs */
		if (wqe->state != SROCE_WQE_DONE) {
			if (sroce_wqe_is_rd_atomic(wqe)) {
				next = sroce_psn_add(wqe->first_psn,
						     wqe->rcvd / qp->mtu);
				if (c->later && wqe->state == SROCE_WQE_SENT &&
				    sroce_psn_after(c->later_psn, next))
					*retry = true;
			}
			break;
		}
		if (wqe->status != IB_WC_SUCCESS)
			break;	/* failed: the completer stops there */
		sroce_comp_rd_done(qp, wqe);
		next = sroce_psn_add(wqe->last_psn, 1);
	}
	if (c->later && !sroce_psn_after(c->later_psn, next))
		c->later = false;
	/* never past what was sent: all PSNs after are refused as forged */
	if (sroce_psn_after(next, qp->req.max_psn))
		next = qp->req.max_psn;
	if (sroce_psn_after(next, qp->comp.psn))
		qp->comp.psn = next;
}

/*
 * A response of a later READ while an older READ or atomic, at @idx,
 * waits for a lost answer: the responder has gone on to the later ones.
 * Taken if it is the next one its READ lacks, so that the re-request of
 * the older one is all the loss costs; dropped, every later READ would
 * need asking again in turn, each while the responder had gone on again.
 * Not progress: the older one's loss is still to recover.  Returns true
 * when it was placed.
 */
static bool sroce_comp_read_later(struct sroce_qp *qp, struct sroce_pkt *pkt,
				  u32 idx)
{
	u32 psn = pkt->h.bth.psn, mtu = qp->mtu, len = pkt->h.payload_len;
	u32 end = sroce_req_sent_end(qp), i;
	struct sroce_comp_state *c = &qp->comp;
	struct sroce_sq *sq = &qp->sq;
	struct sroce_swqe *wqe = NULL;
	bool first;

	/* PSN order: the walk ends at the WQE that holds @psn */
	for (i = idx + 1; i != end; i++) {
		wqe = &sq->kwqe[i & (sq->slots - 1)];
		if (!wqe->npkts)
			continue;
		if (sroce_psn_after(wqe->first_psn, psn))
			return false;
		if (sroce_psn_in_window(psn, wqe->first_psn, wqe->npkts))
			break;
	}
	if (i == end || wqe->opcode != IB_WR_RDMA_READ ||
	    wqe->state != SROCE_WQE_SENT ||
	    psn != sroce_psn_add(wqe->first_psn, wqe->rcvd / mtu))
		return false;
	if (!sroce_comp_read_len_ok(wqe, pkt, wqe->rcvd, mtu))
		return false;
	/* a copy that fails is left to the in-order path, which fails the WQE */
	if (sroce_comp_read_place(qp, wqe, pkt, wqe->rcvd, len))
		return false;
	sroce_qp_count(qp, SROCE_CNT_RX_READ_LATER);
	first = !wqe->rcvd;
	wqe->rcvd += len;
	if (wqe->rcvd == wqe->length)
		wqe->state = SROCE_WQE_DONE;
	if (!c->later || sroce_psn_after(psn, c->later_psn))
		c->later_psn = psn;
	c->later = true;
	/* the responder answers in order: the sends and writes before it are in */
	while (first && ++idx != i) {
		wqe = &sq->kwqe[idx & (sq->slots - 1)];
		if (wqe->npkts && wqe->state == SROCE_WQE_SENT &&
		    !sroce_wqe_is_rd_atomic(wqe))
			wqe->state = SROCE_WQE_DONE;
	}
	return true;
}

/*
 * A READ response: placed if it is the next one or within the read-ahead
 * window.  Any other (past a gap, a copy, a replay of a READ already
 * complete) is dropped; it still holds the ACK timer off (sroce_comp_rcv()).
 */
static bool sroce_comp_read_resp(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 bool *retry)
{
	u32 psn = pkt->h.bth.psn, mtu = qp->mtu, len = pkt->h.payload_len;
	u32 expect;
	struct sroce_comp_state *c = &qp->comp;
	struct sroce_swqe *wqe;
	bool progress;
	u32 idx;

	progress = sroce_comp_ack_through(qp, sroce_psn_add(psn, SROCE_PSN_MASK),
					  retry);
	wqe = sroce_comp_first_open(qp, &idx);
	/* A19: ATOMIC WRITE and FLUSH are answered by an empty READ Response Only */
	if (wqe && sroce_wqe_is_placement(wqe)) {
		if (psn != wqe->first_psn || len ||
		    pkt->h.bth.opcode != SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY)
			goto drop;
		sroce_comp_done_open(qp, wqe, idx, retry);
		return true;
	}
	if (!wqe || wqe->opcode != IB_WR_RDMA_READ ||
	    !sroce_psn_in_window(psn, wqe->first_psn, wqe->npkts)) {
		if (wqe && sroce_comp_read_later(qp, pkt, idx))
			return progress;
		goto drop;
	}
	expect = sroce_psn_add(wqe->first_psn, wqe->rcvd / mtu);
	if (psn != expect) {
		if (sroce_psn_after(psn, expect) &&
		    sroce_comp_read_ahead(qp, wqe, pkt, expect, retry))
			return progress;
		goto drop;
	}
	if (!sroce_comp_read_len_ok(wqe, pkt, wqe->rcvd, mtu))
		goto drop;
	if (sroce_comp_read_place(qp, wqe, pkt, wqe->rcvd, len)) {
		wqe->state = SROCE_WQE_DONE;
		wqe->status = IB_WC_LOC_PROT_ERR;
		return true;
	}
	wqe->rcvd += len;
	/* what was placed ahead of this one is in now too */
	if (c->ooo_wqe == wqe && c->ooo_first_psn == wqe->first_psn) {
		while (wqe->rcvd < wqe->length &&
		       __test_and_clear_bit((wqe->rcvd / mtu) %
					    SROCE_READ_OOO_WINDOW, c->ooo))
			wqe->rcvd += min(mtu, wqe->length - wqe->rcvd);
	}
	if (wqe->rcvd == wqe->length) {
		c->ooo_wqe = NULL;
		sroce_comp_done_open(qp, wqe, idx, retry);
	} else if (sroce_psn_after(sroce_psn_add(wqe->first_psn,
						 wqe->rcvd / mtu),
				   qp->comp.psn)) {
		qp->comp.psn = sroce_psn_add(wqe->first_psn, wqe->rcvd / mtu);
	}
	return true;
drop:
	sroce_qp_count(qp, SROCE_CNT_RX_OOS_RESP);
	return progress;
}

static bool sroce_comp_atomic_ack(struct sroce_qp *qp, struct sroce_pkt *pkt,
				  bool *retry)
{
	u32 psn = pkt->h.bth.psn, cur_sge = 0, sge_off = 0, idx;
	struct sroce_swqe *wqe;
	bool progress;

	progress = sroce_comp_ack_through(qp, sroce_psn_add(psn, SROCE_PSN_MASK),
					  retry);
	wqe = sroce_comp_first_open(qp, &idx);
	if (!wqe || wqe->first_psn != psn ||
	    (wqe->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	     wqe->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)) {
		sroce_qp_count(qp, SROCE_CNT_RX_OOS_RESP);
		return progress;
	}
	/* the original value lands in host order in the local 8 bytes */
	if (sroce_sge_write(qp, qp->pd, wqe->sge, wqe->num_sge, &cur_sge,
			    &sge_off, &pkt->h.atmack.orig, sizeof(u64))) {
		wqe->state = SROCE_WQE_DONE;
		wqe->status = IB_WC_LOC_PROT_ERR;
		return true;
	}
	sroce_comp_done_open(qp, wqe, idx, retry);
	return true;
}

/*
 * Is @psn one an ACK/NAK/response may carry?  Everything it names must
 * have been sent: between the oldest unacknowledged PSN (minus one, for a
 * repeated ACK) and the highest PSN sent.  Anything else is stale or forged.
 */
static bool sroce_comp_psn_ok(struct sroce_qp *qp, u32 psn, bool ack)
{
	u32 lo = ack ? sroce_psn_add(qp->comp.psn, SROCE_PSN_MASK) :
		       qp->comp.psn;

	return !sroce_psn_before(psn, lo) &&
	       sroce_psn_before(psn, qp->req.max_psn);
}

/*
 * Recover from a loss the peer's answers revealed.  A READ whose responses
 * have a gap, or that an answer to a later request passed, costs one READ
 * request for its rest; anything else goes back to the oldest
 * unacknowledged PSN.
 */
static void sroce_comp_go_back(struct sroce_qp *qp, bool answer)
{
	struct sroce_swqe *wqe;
	u32 idx;

	wqe = sroce_comp_first_open(qp, &idx);
	/* an answer (not a NAK) shows that the requests after it arrived */
	if (answer && wqe && wqe->opcode == IB_WR_RDMA_READ &&
	    wqe->state == SROCE_WQE_SENT &&
	    qp->comp.psn == sroce_psn_add(wqe->first_psn,
					  wqe->rcvd / qp->mtu)) {
		sroce_req_reread(qp, wqe);
		return;
	}
	sroce_req_rewind(qp, qp->comp.psn);
}

void sroce_comp_rcv(struct sroce_pkt *pkt)
{
	struct sroce_qp *qp = pkt->qp;
	u32 mask = pkt->h.info->mask, psn = pkt->h.bth.psn, old_psn;
	bool progress = false, retry = false, alive = false, ok;

	sroce_assert_engine(qp);
	if (qp->type != IB_QPT_RC ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)) {
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_QP_STATE);
		return;
	}
	/*
	 * Only an ACKNOWLEDGE may carry a NAK, and no packet the reserved
	 * AETH type: anything else would pass for progress, or (an atomic
	 * ACK) complete its WQE with a result the responder never gave.
	 */
	if ((mask & SROCE_M_AETH) &&
	    (sroce_aeth_type(pkt->h.aeth.syndrome) == SROCE_AETH_RSVD ||
	     (pkt->h.bth.opcode != SROCE_OP_RC_ACKNOWLEDGE &&
	      !sroce_aeth_is_ack(pkt->h.aeth.syndrome)))) {
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_MALFORMED);
		return;
	}
	if (mask & SROCE_M_READ) {
		/* read responses are matched against the open READ itself */
		ok = sroce_psn_before(psn, qp->req.max_psn);
	} else if ((mask & SROCE_M_ACK) &&
		   sroce_aeth_type(pkt->h.aeth.syndrome) == SROCE_AETH_ACK) {
		ok = sroce_comp_psn_ok(qp, psn, true);
	} else {
		/* NAKs and atomic ACKs name an outstanding request */
		ok = sroce_comp_psn_ok(qp, psn, false);
	}
	/*
	 * Any answer not far behind shows a responder working through what
	 * we sent (rdma_rxe answers every copy of a request in turn, a READ
	 * with a whole replay): it holds the ACK timer off, without refilling
	 * the retry budget, for at most SROCE_ALIVE_MAX_MS since progress.
	 */
	alive = !sroce_psn_before(psn, sroce_psn_add(qp->comp.psn,
				  SROCE_PSN_MASK + 1 - SROCE_ALIVE_PSNS)) &&
		sroce_psn_before(psn, qp->req.max_psn) &&
		!time_after(jiffies, qp->comp.progress_at +
			    msecs_to_jiffies(SROCE_ALIVE_MAX_MS));
	if (!ok) {
		sroce_qp_count(qp, SROCE_CNT_RX_STALE_ACK);
		if (alive)
			sroce_req_timer_update(qp, true);
		return;
	}
	old_psn = qp->comp.psn;
	if (mask & SROCE_M_READ)
		progress = sroce_comp_read_resp(qp, pkt, &retry);
	else if (pkt->h.bth.opcode == SROCE_OP_RC_ATOMIC_ACKNOWLEDGE)
		progress = sroce_comp_atomic_ack(qp, pkt, &retry);
	else if (mask & SROCE_M_ACK)
		progress = sroce_comp_ack(qp, pkt, &retry);
	/* an ACK inside a long message is progress too, not just a WQE done */
	if (sroce_psn_after(qp->comp.psn, old_psn)) {
		progress = true;
		/* each acknowledged PSN opens the window by one (slow start) */
		if (qp->req.cwnd)
			qp->req.cwnd = min_t(u32, SROCE_MAX_UNACKED_PSNS,
					     qp->req.cwnd +
					     sroce_psn_diff(qp->comp.psn, old_psn));
	}

	if (progress) {
		qp->comp.progress_at = jiffies;
		/* both retry budgets are per message: refill on progress */
		qp->req.retry_cnt = qp->retry_cnt;
		qp->req.probed = false;
		if (!qp->req.rnr_wait)
			qp->req.rnr_retry = qp->rnr_retry;
		qp->comp.rewound = false;
	}
	/*
	 * An RNR NAK rewound the send queue: the sequence NAK the responder
	 * sent for the packets behind it asks for the same resend.
	 */
	if (qp->req.rnr_wait) {
		qp->comp.rewound = true;
		qp->comp.rewound_psn = qp->comp.psn;
	}
	/*
	 * Go back to the oldest unacknowledged PSN, once: every later packet
	 * of the same loss (each response past a gap, each copy of a NAK)
	 * says the same, and resending once per copy would only feed the
	 * loss.  Progress or the local ACK timer re-arms it.
	 */
	if (retry) {
		if (qp->comp.rewound && qp->comp.rewound_psn == qp->comp.psn) {
			sroce_qp_count(qp, SROCE_CNT_RX_STALE_ACK);
		} else {
			sroce_qp_dbg(qp, "go back to %#x (opcode %u psn %#x)\n",
				     qp->comp.psn, pkt->h.bth.opcode, psn);
			sroce_qp_count(qp, SROCE_CNT_RETRANS_NAK);
			qp->stats.retry_nak++;
			trace_sroce_retrans(qp, qp->comp.psn, true);
			qp->comp.rewound = true;
			qp->comp.rewound_psn = qp->comp.psn;
			sroce_comp_go_back(qp, (mask & SROCE_M_READ) ||
					   pkt->h.bth.opcode ==
					   SROCE_OP_RC_ATOMIC_ACKNOWLEDGE);
		}
	}
	sroce_req_timer_update(qp, progress || alive);
}
