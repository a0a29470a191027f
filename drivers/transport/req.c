// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Requester: turns send WQEs into request packets (segmentation by path
 * MTU, PSN assignment, AckReq pacing), and rewinds for go-back-N.
 */
#include <linux/skbuff.h>
#include <linux/jiffies.h>

#include "sroce/transport.h"
#include "sroce/trace.h"
#include "sroce/wire/udp.h"


static u32 sroce_req_mtu(const struct sroce_qp *qp)
{
	if (sroce_qp_is_ud(qp))
		return ib_mtu_enum_to_int(READ_ONCE(qp->sdev->port_mtu));
	return qp->mtu;
}

static u8 sroce_req_opcode(const struct sroce_qp *qp,
			   const struct sroce_swqe *wqe, bool first, bool last)
{
	u8 base = sroce_qp_opbase(qp);

	switch (wqe->opcode) {
	case IB_WR_SEND:
		if (first && last)
			return base + SROCE_OPX_SEND_ONLY;
		if (first)
			return base + SROCE_OPX_SEND_FIRST;
		return base + (last ? SROCE_OPX_SEND_LAST :
				      SROCE_OPX_SEND_MIDDLE);
	case IB_WR_SEND_WITH_IMM:
		if (first && last)
			return base + SROCE_OPX_SEND_ONLY_WITH_IMMEDIATE;
		if (first)
			return base + SROCE_OPX_SEND_FIRST;
		return base + (last ? SROCE_OPX_SEND_LAST_WITH_IMMEDIATE :
				      SROCE_OPX_SEND_MIDDLE);
	case IB_WR_SEND_WITH_INV:
		if (first && last)
			return base + SROCE_OPX_SEND_ONLY_WITH_INVALIDATE;
		if (first)
			return base + SROCE_OPX_SEND_FIRST;
		return base + (last ? SROCE_OPX_SEND_LAST_WITH_INVALIDATE :
				      SROCE_OPX_SEND_MIDDLE);
	case IB_WR_RDMA_WRITE:
		if (first && last)
			return base + SROCE_OPX_RDMA_WRITE_ONLY;
		if (first)
			return base + SROCE_OPX_RDMA_WRITE_FIRST;
		return base + (last ? SROCE_OPX_RDMA_WRITE_LAST :
				      SROCE_OPX_RDMA_WRITE_MIDDLE);
	case IB_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			return base + SROCE_OPX_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
		if (first)
			return base + SROCE_OPX_RDMA_WRITE_FIRST;
		return base + (last ?
			       SROCE_OPX_RDMA_WRITE_LAST_WITH_IMMEDIATE :
			       SROCE_OPX_RDMA_WRITE_MIDDLE);
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return base + SROCE_OPX_COMPARE_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return base + SROCE_OPX_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return base + SROCE_OPX_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return base + SROCE_OPX_FLUSH;
	default:
		return base + SROCE_OPX_RDMA_READ_REQUEST;
	}
}

/*
 * How many PSNs may be unacknowledged.  A go-back shrinks it to
 * SROCE_CWND_MIN and acknowledged PSNs grow it back: resending the whole
 * window after every loss would bury the responder under copies it must
 * drop (with reordering nearly all of them), and the retransmissions it
 * needs would then be lost in its full receive queue.
 */
static s32 sroce_req_window(const struct sroce_qp *qp)
{
	/* signed: after a go-back the next PSN can be behind comp.psn */
	return qp->req.cwnd ?: SROCE_MAX_UNACKED_PSNS;
}

/*
 * The ACK timer's clock (re)starts now; armed unless it already is for
 * no later than the new deadline (a shorter timeout may have been set).
 */
static void sroce_req_timer_push(struct sroce_qp *qp)
{
	unsigned long deadline = jiffies + sroce_retrans_jiffies(qp);

	qp->req.ack_wait_at = jiffies;
	if (!timer_pending(&qp->retrans_timer) ||
	    time_after(READ_ONCE(qp->retrans_timer.expires), deadline))
		mod_timer(&qp->retrans_timer, deadline);
}

/* The ACK timer starts from idle: a new wait, and the start of its clock. */
static void sroce_req_timer_start(struct sroce_qp *qp)
{
	qp->comp.progress_at = jiffies;
	qp->req.ack_wait = true;
	sroce_req_timer_push(qp);
}

/*
 * One request packet went out, for PSNs @first to @last: window
 * bookkeeping and timer.
 */
static void sroce_req_sent(struct sroce_qp *qp, u32 first, u32 last)
{
	u32 next = sroce_psn_add(last, 1);

	if (sroce_psn_extends(next, qp->req.max_psn, qp->comp.psn))
		qp->req.max_psn = next;
	/* every request asks for an ACK unless its sender says otherwise */
	qp->req.ackreq_owed = false;
	/* timeout 0: the local ACK timer is infinite (never armed) */
	if (qp->type != IB_QPT_RC || !qp->timeout)
		return;
	if (!qp->req.ack_wait)
		sroce_req_timer_start(qp);
	else if (first == qp->comp.psn)
		/* the oldest unanswered PSN: held back until now (TX room) */
		sroce_req_timer_push(qp);
}

/*
 * The last answer's WQE has retired: the wait is over.  The timer stays
 * armed; its expiry finds no wait.  The next request starts a new wait,
 * with its own clock.
 */
void sroce_req_wait_end(struct sroce_qp *qp)
{
	if (qp->req.ack_wait && !sroce_req_outstanding(qp))
		qp->req.ack_wait = false;
}

/*
 * modify_qp set a new local ACK timeout: a running wait keeps its clock
 * and takes the new deadline; requests that timeout 0 left unwatched
 * start one now.  A new timeout of 0 ends the wait.
 */
void sroce_req_timeout_set(struct sroce_qp *qp)
{
	sroce_assert_engine(qp);
	if (qp->type != IB_QPT_RC)
		return;
	if (!qp->timeout)
		qp->req.ack_wait = false;	/* infinite: a late expiry is ignored */
	else if (qp->req.ack_wait)
		mod_timer(&qp->retrans_timer,
			  qp->req.ack_wait_at + sroce_retrans_jiffies(qp));
	else
		sroce_req_timer_update(qp, false);
}

/*
 * One past the last WQE with packets on the wire: sq->req, or the WQE at
 * sq->req when it is partly sent (a window smaller than the message).
 */
u32 sroce_req_sent_end(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	struct sroce_swqe *wqe = &sq->kwqe[sq->req & (sq->slots - 1)];

	/* acquire: a kernel poster's WQE is visible once head shows it */
	if (sq->req != smp_load_acquire(&sq->head) && wqe->npkts &&
	    wqe->state != SROCE_WQE_DONE)
		return sq->req + 1;
	return sq->req;
}

/* Has any request been sent that is not yet answered? */
bool sroce_req_outstanding(struct sroce_qp *qp)
{
	return qp->sq.comp != sroce_req_sent_end(qp);
}

/*
 * After an ACK or response: restart the local ACK timer while requests are
 * outstanding (@progress), stop it when none are.
 */
void sroce_req_timer_update(struct sroce_qp *qp, bool progress)
{
	if (qp->type != IB_QPT_RC || !qp->timeout)
		return;
	if (qp->req.rnr_wait || !sroce_req_outstanding(qp))
		qp->req.ack_wait = false;	/* a late expiry is ignored */
	else if (!qp->req.ack_wait)
		sroce_req_timer_start(qp);
	else if (progress)
		sroce_req_timer_push(qp);
}

/*
 * The packet with its payload by reference to the SGEs' user pages
 * (sroce_pkt_ref_ok); NULL: build a copy instead, with the SGE cursor
 * as it was; an ERR_PTR: the SGEs themselves are bad.
 */
static struct sk_buff *sroce_req_ref_payload(struct sroce_qp *qp,
					     struct sroce_swqe *wqe,
					     const struct sroce_av *av,
					     struct sroce_pkt_hdrs *h, u32 len)
{
	u32 cur_sge = wqe->cur_sge, sge_off = wqe->sge_off;
	struct sk_buff *skb;
	int err;

	skb = sroce_build_pkt_ref(qp, av, h, len);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	err = sroce_sge_ref_out(qp, wqe->sge, wqe->num_sge, &wqe->cur_sge,
				&wqe->sge_off, skb, len);
	if (!err)
		err = sroce_pkt_ref_end(skb, h);
	if (!err)
		return skb;
	kfree_skb(skb);
	wqe->cur_sge = cur_sge;
	wqe->sge_off = sge_off;
	return err == -EOPNOTSUPP || err == -E2BIG ? NULL : ERR_PTR(err);
}
/*
 * Does the last packet of a SEND/WRITE ask for an ACK?  A signaled WQE's
 * does, an unsignaled one's need not: a later ACK covers it (one every
 * SROCE_ACKREQ_EVERY packets, a signaled WQE's, a READ's response), so a
 * stream of small unsignaled messages costs one ACK per 16, not one each.
 * A tail that nothing covers is probed (sroce_req_probe).
 */
static bool sroce_req_tail_ackreq(const struct sroce_qp *qp,
				  const struct sroce_swqe *wqe, u32 psn)
{
	return sroce_wqe_signaled(qp, wqe) ||
	       !qp->timeout ||		/* no ACK timer would probe the tail */
	       qp->sq_draining ||
	       sroce_psn_before(psn, qp->req.max_psn) ||	/* a resend */
	       /* half the ring open: its room must not wait for a probe */
	       qp->sq.req - qp->sq.comp + 1 >= qp->sq.slots / 2;
}

/*
 * The AckReq pacing of a packet that is not a message's last: one every
 * SROCE_ACKREQ_EVERY packets, and the last one the window lets out.  A
 * train's packets (sroce_req_send_train) must ask exactly as they would
 * one by one, so both ways go through here.
 */
static bool sroce_req_ackreq_paced(const struct sroce_qp *qp, u32 psn,
				   u32 *since)
{
	if (++*since >= SROCE_ACKREQ_EVERY ||
	    sroce_psn_diff(psn, qp->comp.psn) + 1 >= sroce_req_window(qp)) {
		*since = 0;
		return true;
	}
	return false;
}

/* the RETH rides on a WRITE's first packet */
static void sroce_req_fill_reth(const struct sroce_swqe *wqe, bool first,
				struct sroce_pkt_hdrs *h)
{
	if (first && (wqe->opcode == IB_WR_RDMA_WRITE ||
		      wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM)) {
		h->reth.va = wqe->remote_addr;
		h->reth.rkey = wqe->rkey;
		h->reth.len = wqe->length;
	}
}

/*
 * Send the next segment of a SEND/WRITE WQE.  Returns 1 when the WQE's
 * last packet went out, 0 when more remain, or a negative errno for a
 * local error that fails the WQE.
 */
static int sroce_req_send_seg(struct sroce_qp *qp, struct sroce_swqe *wqe,
			      u32 mtu)
{
	bool ud = sroce_qp_is_ud(qp);
	u32 off = wqe->sent;
	u32 len = min(mtu, wqe->length - off);
	bool first = off == 0;
	bool last = off + len >= wqe->length;
	const struct sroce_av *av = ud ? &wqe->av : &qp->av;
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;
	u16 sport = qp->sport;
	u8 *payload;
	int err;

	h.bth.opcode = sroce_req_opcode(qp, wqe, first, last);
	h.bth.psn = ud ? qp->req.psn : sroce_psn_add(wqe->first_psn, off / mtu);
	/*
	 * Acknowledged since the go-back that queued it again: the responder
	 * has it.  The last packet still goes, so its ACK completes the WQE.
	 */
	if (qp->type == IB_QPT_RC && !last &&
	    sroce_psn_before(h.bth.psn, qp->comp.psn)) {
		wqe->sent += len;
		if (!wqe->is_inline)
			sroce_sge_seek(wqe->sge, wqe->num_sge, wqe->sent,
				       &wqe->cur_sge, &wqe->sge_off);
		qp->req.psn = sroce_psn_add(h.bth.psn, 1);
		return 0;
	}
	h.bth.dqpn = ud ? wqe->remote_qpn : qp->dest_qpn;
	h.bth.se = last && (wqe->send_flags & IB_SEND_SOLICITED) &&
		   wqe->opcode != IB_WR_RDMA_WRITE;
	/* ask for an ACK on the last packet the window lets out, too */
	if (qp->type == IB_QPT_RC) {
		if (last && sroce_req_tail_ackreq(qp, wqe, h.bth.psn)) {
			h.bth.ackreq = true;
			qp->req.pkts_since_ackreq = 0;
		} else {
			h.bth.ackreq = sroce_req_ackreq_paced(qp, h.bth.psn,
						&qp->req.pkts_since_ackreq);
		}
	}
	sroce_req_fill_reth(wqe, first, &h);
	h.imm = be32_to_cpu((__force __be32)wqe->imm_data);
	h.ieth_rkey = wqe->inv_rkey;
	if (ud) {
		/* C10-15: a WR Q_Key with the high bit set means "use the QP's" */
		h.deth.qkey = (wqe->remote_qkey & 0x80000000) ? qp->qkey :
							      wqe->remote_qkey;
		h.deth.sqpn = qp->qpn;
		sport = sroce_udp_sport(qp->qpn, wqe->remote_qpn);
	}
	skb = NULL;
	if (!wqe->is_inline && sroce_pkt_ref_ok(qp, av, len)) {
		skb = sroce_req_ref_payload(qp, wqe, av, &h, len);
		if (IS_ERR(skb))
			return PTR_ERR(skb);
	}
	if (!skb) {
		skb = sroce_build_pkt(qp, av, &h, len, &payload);
		if (!skb)
			return -ENOMEM;
		if (wqe->is_inline)
			memcpy(payload, wqe->inline_data + off, len);
		else
			err = sroce_sge_copy_out(qp, wqe->sge, wqe->num_sge,
						 &wqe->cur_sge, &wqe->sge_off,
						 payload, len);
		if (!wqe->is_inline && err) {
			kfree_skb(skb);
			return err;
		}
	}
	/* a send failure is a lost packet: go-back-N recovers RC */
	sroce_pkt_send(qp->sdev, av, ud ? NULL : &qp->dst_cache, sport, skb);
	sroce_req_sent(qp, h.bth.psn, h.bth.psn);
	if (qp->type == IB_QPT_RC && !h.bth.ackreq) {
		qp->req.ackreq_owed = true;
		qp->req.tail_wqe = wqe;
	}
	wqe->sent += len;
	qp->req.psn = sroce_psn_add(h.bth.psn, 1);
	return last ? 1 : 0;
}

/*
 * Loopback: the next whole-MTU packets of a SEND/WRITE, up to the one
 * before its last, in one skb (struct sroce_train).  The peer's engine
 * takes them one by one, as if they had come one per skb; a train only
 * saves the per-skb work (build, hand-off, queueing, parse, free).  Each
 * packet asks for an ACK as it would alone.  Returns the packets sent, or
 * 0: send one the ordinary way (sroce_req_send_seg), which also gives any
 * error its ordinary place.
 */
static int sroce_req_send_train(struct sroce_qp *qp, struct sroce_swqe *wqe,
				u32 mtu, int budget)
{
	u32 off = wqe->sent, psn, n, i, since = qp->req.pkts_since_ackreq;
	struct sroce_pkt_hdrs h = {};
	struct sroce_train *t;
	struct sk_buff *skb;
	u16 ackreq = 0;
	s32 room;

	/* at least two whole packets before the last one */
	if (qp->type != IB_QPT_RC || wqe->is_inline || wqe->no_train ||
	    off % mtu || wqe->length - off <= 2 * mtu ||
	    !sroce_pkt_ref_ok(qp, &qp->av, mtu))
		return 0;
	psn = sroce_psn_add(wqe->first_psn, off / mtu);
	/* a resend that skips acknowledged packets goes one by one */
	if (psn != qp->req.psn || sroce_psn_before(psn, qp->comp.psn))
		return 0;
	room = sroce_req_window(qp) - (s32)sroce_psn_diff(psn, qp->comp.psn);
	/* whole packets before the message's last one */
	n = (wqe->length - off - 1) / mtu;
	n = min3(n, (u32)SROCE_TRAIN_PKTS, (u32)SROCE_TRAIN_BYTES / mtu);
	if (room < 2 || budget < 2 || n < 2)
		return 0;
	n = min3(n, (u32)room, (u32)budget);
	for (i = 0; i < n; i++)
		if (sroce_req_ackreq_paced(qp, sroce_psn_add(psn, i), &since))
			ackreq |= BIT(i);
	h.bth.opcode = sroce_req_opcode(qp, wqe, !off, false);
	h.bth.psn = psn;
	h.bth.dqpn = qp->dest_qpn;
	h.bth.ackreq = ackreq & 1;
	sroce_req_fill_reth(wqe, !off, &h);
	skb = sroce_req_ref_payload(qp, wqe, &qp->av, &h, n * mtu);
	if (IS_ERR_OR_NULL(skb)) {
		/* more than one MR, too many pieces, memory: not again */
		wqe->no_train = true;
		return 0;
	}
	t = sroce_train(skb);
	t->pkts = n;
	t->seg = mtu;
	t->ackreq = ackreq;
	sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
	sroce_req_sent(qp, psn, sroce_psn_add(psn, n - 1));
	qp->req.pkts_since_ackreq = since;
	if (!(ackreq & BIT(n - 1))) {
		qp->req.ackreq_owed = true;
		qp->req.tail_wqe = wqe;
	}
	wqe->sent += n * mtu;
	qp->req.psn = sroce_psn_add(psn, n);
	return n;
}

/*
 * The last request sent went without AckReq and something now waits for
 * its ACK (the ACK timer, an SQD drain, a LOCAL_INV behind it, a
 * completion behind it that sends no packet): send that
 * packet again, asking.  The responder answers a duplicate with an ACK
 * through everything it has, a gap with a sequence NAK.  Returns true if
 * the probe went out.
 */
bool sroce_req_probe(struct sroce_qp *qp)
{
	struct sroce_swqe *wqe = qp->req.tail_wqe;
	u32 sent, cur_sge, sge_off, psn = qp->req.psn;
	u32 mtu = sroce_req_mtu(qp);
	int ret;

	sroce_assert_engine(qp);
	if (!qp->req.ackreq_owed)
		return false;
	/* only a caught-up requester: a go-back resends with AckReq anyway */
	if (psn != qp->req.max_psn || !sroce_req_outstanding(qp) || !wqe ||
	    wqe->state != SROCE_WQE_SENT || !wqe->npkts ||
	    sroce_wqe_is_rd_atomic(wqe) ||
	    wqe->last_psn != sroce_psn_add(psn, SROCE_PSN_MASK) ||
	    !sroce_tx_room(qp))
		return false;
	sent = wqe->sent;
	cur_sge = wqe->cur_sge;
	sge_off = wqe->sge_off;
	wqe->sent = (wqe->npkts - 1) * mtu;
	if (!wqe->is_inline)
		sroce_sge_seek(wqe->sge, wqe->num_sge, wqe->sent,
			       &wqe->cur_sge, &wqe->sge_off);
	ret = sroce_req_send_seg(qp, wqe, mtu);
	wqe->sent = sent;
	wqe->cur_sge = cur_sge;
	wqe->sge_off = sge_off;
	qp->req.psn = psn;
	if (ret != 1)
		return false;
	sroce_qp_count(qp, SROCE_CNT_ACKREQ_PROBE);
	return true;
}

/* The PSN of @wqe's first missing READ response: where a re-request starts. */
static u32 sroce_req_read_psn(const struct sroce_swqe *wqe, u32 mtu)
{
	return sroce_psn_add(wqe->first_psn, wqe->rcvd / mtu);
}

/* The READ request for what @wqe still lacks: from its first missing response on. */
static int sroce_req_read_xmit(struct sroce_qp *qp, struct sroce_swqe *wqe,
			       u32 mtu)
{
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;
	u8 *payload;

	h.bth.opcode = sroce_req_opcode(qp, wqe, true, true);
	h.bth.psn = sroce_req_read_psn(wqe, mtu);
	h.bth.dqpn = qp->dest_qpn;
	h.bth.ackreq = true;
	h.reth.va = wqe->remote_addr + wqe->rcvd;
	h.reth.rkey = wqe->rkey;
	h.reth.len = wqe->length - wqe->rcvd;
	skb = sroce_build_pkt(qp, &qp->av, &h, 0, &payload);
	if (!skb)
		return -ENOMEM;
	sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
	return 0;
}

static int sroce_req_send_read(struct sroce_qp *qp, struct sroce_swqe *wqe,
			       u32 mtu)
{
	int err = sroce_req_read_xmit(qp, wqe, mtu);

	if (err)
		return err;
	sroce_req_sent(qp, sroce_req_read_psn(wqe, mtu), wqe->last_psn);
	qp->req.psn = sroce_psn_add(wqe->last_psn, 1);
	return 1;
}

/*
 * Ask again for the rest of a READ whose responses have a hole, and for
 * nothing else: an answer to a later PSN showed that the requests after it
 * arrived, and resending them would make the responder replay those too
 * (rdma_rxe replays each copy in full, one after another); their responses
 * are placed meanwhile (sroce_comp_read_later()).  A lost copy is covered
 * by the ACK timer, which goes back over everything.
 */
void sroce_req_reread(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	sroce_assert_engine(qp);
	sroce_req_read_xmit(qp, wqe, sroce_req_mtu(qp));
}

static int sroce_req_send_atomic(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;
	u8 *payload;

	h.bth.opcode = sroce_req_opcode(qp, wqe, true, true);
	h.bth.psn = wqe->first_psn;
	h.bth.dqpn = qp->dest_qpn;
	h.bth.ackreq = true;
	h.atmeth.va = wqe->remote_addr;
	h.atmeth.rkey = wqe->rkey;
	if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
		h.atmeth.swap_add = wqe->swap;
		h.atmeth.cmp = wqe->compare_add;
	} else {
		h.atmeth.swap_add = wqe->compare_add;
	}
	skb = sroce_build_pkt(qp, &qp->av, &h, 0, &payload);
	if (!skb)
		return -ENOMEM;
	sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
	sroce_req_sent(qp, wqe->first_psn, wqe->first_psn);
	qp->req.psn = sroce_psn_add(wqe->first_psn, 1);
	return 1;
}

/*
 * ATOMIC WRITE (RETH and its 8 bytes) or FLUSH (FETH and RETH, no
 * payload, oA19-2): one packet, answered by a READ response of its own.
 */
static int sroce_req_send_placement(struct sroce_qp *qp,
				    struct sroce_swqe *wqe)
{
	bool flush = wqe->opcode == SROCE_WR_FLUSH;
	u32 len = flush ? 0 : wqe->length, cur_sge = 0, sge_off = 0;
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;
	u8 *payload;
	int err = 0;

	h.bth.opcode = sroce_req_opcode(qp, wqe, true, true);
	h.bth.psn = wqe->first_psn;
	h.bth.dqpn = qp->dest_qpn;
	h.bth.ackreq = true;
	h.reth.va = wqe->remote_addr;
	h.reth.rkey = wqe->rkey;
	h.reth.len = flush ? wqe->flush_len : len;
	h.feth.plt = wqe->flush_type;
	h.feth.sel = wqe->flush_level;
	skb = sroce_build_pkt(qp, &qp->av, &h, len, &payload);
	if (!skb)
		return -ENOMEM;
	if (wqe->is_inline)
		memcpy(payload, wqe->inline_data, len);
	else if (len)
		err = sroce_sge_copy_out(qp, wqe->sge, wqe->num_sge, &cur_sge,
					 &sge_off, payload, len);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
	sroce_req_sent(qp, wqe->first_psn, wqe->first_psn);
	qp->req.psn = sroce_psn_add(wqe->first_psn, 1);
	return 1;
}

/*
 * The WQE at sq->req failed: no later WQE may start, though the QP only
 * goes to Error once the WQEs before it are answered and it is retired (a
 * go-back may still resend those).
 */
static void sroce_req_halt(struct sroce_qp *qp)
{
	qp->req.halted = true;
	qp->req.halt_next = qp->sq.req + 1;
	/* its completion waits for the WQEs before it: ask for their ACK */
	sroce_req_probe(qp);
}

static void sroce_wqe_fail(struct sroce_qp *qp, struct sroce_swqe *wqe,
			   int err)
{
	wqe->state = SROCE_WQE_DONE;
	wqe->status = err == -EINVAL ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
	sroce_req_halt(qp);
}

/*
 * REG_MR, BIND_MW and LOCAL_INV run here, in send queue order: nothing
 * after them starts before they took effect (o10-37.2.6, o10-37.2.36).  A failure completes the
 * WQE in error, which ends the QP and flushes the rest.
 */
static void sroce_req_local(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	int err;

	enum ib_wc_status fail = IB_WC_LOC_QP_OP_ERR;

	if (wqe->opcode == IB_WR_REG_MR) {
		err = sroce_mr_fast_reg(qp, wqe);
	} else if (wqe->opcode == IB_WR_BIND_MW) {
		err = sroce_mw_bind(qp, wqe);
		fail = IB_WC_MW_BIND_ERR;
	} else {
		err = sroce_mr_invalidate(qp, wqe->inv_rkey);
	}
	wqe->state = SROCE_WQE_DONE;
	wqe->status = err ? fail : IB_WC_SUCCESS;
	if (err)
		sroce_req_halt(qp);
}

/*
 * Transmit what the send queue holds, up to *budget packets.  Returns true
 * when it stopped on the budget with work left; every other stop (window,
 * max_rd_atomic, fence, skb room, RNR wait) ends on an event that queues
 * the engine again.
 */
bool sroce_req_run(struct sroce_qp *qp, int *budget)
{
	struct sroce_sq *sq = &qp->sq;
	bool more = false, rc = qp->type == IB_QPT_RC;
	u32 mtu = sroce_req_mtu(qp), head, idx;

	sroce_assert_engine(qp);
	/*
	 * A pass run by a loopback peer's syscall leaves newly posted WQEs to
	 * their owner's doorbell, which then sends them in parallel.
	 */
	if (qp->user && (!qp->no_fetch || qp->pass_rung || qp->sq_fetch_owed))
		more = sroce_sq_fetch(qp, SROCE_FETCH_BUDGET);
	if (qp->req.rnr_wait)
		return more;
	/* kernel posters publish head after writing the WQE */
	head = smp_load_acquire(&sq->head);

	while (sq->req != head) {
		struct sroce_swqe *wqe = &sq->kwqe[sq->req & (sq->slots - 1)];
		int ret;

		if (qp->req.halted && sq->req == qp->req.halt_next)
			break;
		if (wqe->state == SROCE_WQE_DONE) {
			/*
			 * Failed validation at fetch, or a READ/atomic the
			 * completer finished after a go-back: its PSNs are
			 * spent, the next WQE must not reuse them.
			 */
			if (wqe->npkts && sroce_psn_before(qp->req.psn,
					sroce_psn_add(wqe->last_psn, 1)))
				qp->req.psn = sroce_psn_add(wqe->last_psn, 1);
			if (wqe->status != IB_WC_SUCCESS)
				sroce_req_halt(qp);
			sq->req++;
			continue;
		}
		/* SQD: a WQE not yet started stays so (C10-35) */
		if (!wqe->npkts && qp->state == IB_QPS_SQD)
			break;
		if (sroce_wr_is_local(wqe->opcode)) {
			/*
			 * A LOCAL_INV (and a fenced REG_MR) waits until no
			 * earlier WQE is open: a resend of one may still need
			 * the key (strong ordering, which also satisfies the
			 * relaxed ordering of o10-37.2.19).  Every ACK that
			 * finishes one queues the engine again.
			 */
			if ((wqe->opcode == IB_WR_LOCAL_INV ||
			     (wqe->send_flags & IB_SEND_FENCE)) &&
			    sroce_comp_first_open(qp, &idx)) {
				sroce_req_probe(qp);
				break;
			}
			if (*budget <= 0) {
				more = true;
				break;
			}
			(*budget)--;
			sroce_req_local(qp, wqe);
			/* completes in order: an unasked tail must not hold it */
			if (sroce_wqe_signaled(qp, wqe) ||
			    wqe->status != IB_WC_SUCCESS)
				sroce_req_probe(qp);
			sq->req++;
			continue;
		}
		if (!wqe->npkts) {
			wqe->npkts = sroce_qp_is_ud(qp) || !wqe->length ||
				     sroce_wqe_is_atomic(wqe) ||
				     sroce_wqe_is_placement(wqe) ? 1 :
				     DIV_ROUND_UP(wqe->length, mtu);
			wqe->first_psn = qp->req.psn;
			wqe->last_psn = sroce_psn_add(wqe->first_psn,
						      wqe->npkts - 1);
		}
		if (rc) {
			if (!sroce_psn_window_open(qp->req.psn, qp->comp.psn,
						   sroce_req_window(qp),
						   wqe->opcode == IB_WR_RDMA_READ ?
						   wqe->npkts : 0))
				break;
			if (sroce_wqe_is_rd_atomic(wqe) && !wqe->rd_counted &&
			    qp->req.rd_outstanding >= qp->max_rd_atomic)
				break;
			/*
			 * Fenced: not before the READs and atomics ahead of it
			 * are answered.  A resend (its PSNs were sent) had its
			 * fence kept; READs after it answered early hold their
			 * slots until it is done, and must not block it.
			 */
			if ((wqe->send_flags & IB_SEND_FENCE) &&
			    qp->req.rd_outstanding && wqe->sent == 0 &&
			    !wqe->rd_counted &&
			    !sroce_psn_before(wqe->first_psn, qp->req.max_psn))
				break;
		}
		if (*budget <= 0) {
			more = true;
			break;
		}
		if (!sroce_tx_room(qp))
			break;
		if (sroce_qp_is_ud(qp) && wqe->length > mtu) {
			/* C10-93.1.1: too long for UD, nothing is sent */
			ret = 1;
		} else if (sroce_wqe_is_rd_atomic(wqe)) {
			if (sroce_wqe_is_read(wqe))
				ret = sroce_req_send_read(qp, wqe, mtu);
			else if (sroce_wqe_is_placement(wqe))
				ret = sroce_req_send_placement(qp, wqe);
			else
				ret = sroce_req_send_atomic(qp, wqe);
			if (ret > 0 && !wqe->rd_counted) {
				wqe->rd_counted = true;
				qp->req.rd_outstanding++;
			}
		} else {
			ret = sroce_req_send_train(qp, wqe, mtu, *budget);
			if (ret > 0) {
				*budget -= ret;
				continue;	/* never the message's last packet */
			}
			ret = sroce_req_send_seg(qp, wqe, mtu);
		}
		(*budget)--;
		if (ret == -ENOMEM) {
			more = true;
			break;
		}
		if (ret < 0) {
			sroce_wqe_fail(qp, wqe, ret);
			sq->req++;
			break;
		}
		if (ret == 0)
			continue;
		sq->req++;
		/* UC and UD complete once their packets are out */
		wqe->state = rc ? SROCE_WQE_SENT : SROCE_WQE_DONE;
	}
	return more;
}

/*
 * Go back to @psn: the first unfinished WQE resumes at the segment holding
 * @psn (a read resumes after the data already placed), the ones after it,
 * including one that was only partly sent, restart.  PSNs stay as first
 * assigned, so the retransmission is the same packet sequence.
 */
void sroce_req_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_sq *sq = &qp->sq;
	u32 i, end = sroce_req_sent_end(qp), mtu = sroce_req_mtu(qp);
	bool found = false;

	sroce_assert_engine(qp);
	qp->req.cwnd = SROCE_CWND_MIN;
	/* no hint of a loss past the oldest open WQE: all is asked for again */
	qp->comp.later = false;
	for (i = sq->comp; i != end; i++) {
		struct sroce_swqe *wqe = &sq->kwqe[i & (sq->slots - 1)];

		/* answered, not retired: its slot stays taken till it retires */
		if (wqe->state == SROCE_WQE_DONE)
			continue;
		/* what is sent again is counted again as it goes */
		sroce_comp_rd_done(qp, wqe);
		if (!found) {
			found = true;
			sq->req = i;
			if (sroce_wqe_is_rd_atomic(wqe)) {
				psn = sroce_psn_add(wqe->first_psn,
						    wqe->rcvd / mtu);
			} else {
				if (!sroce_psn_in_window(psn, wqe->first_psn,
							 wqe->npkts))
					psn = wqe->first_psn;
				wqe->sent = sroce_psn_diff(psn, wqe->first_psn) *
					    mtu;
				sroce_sge_seek(wqe->sge, wqe->num_sge, wqe->sent,
					       &wqe->cur_sge, &wqe->sge_off);
			}
			qp->req.psn = psn;
		} else {
			wqe->sent = 0;
			wqe->rcvd = 0;
			wqe->cur_sge = 0;
			wqe->sge_off = 0;
		}
		wqe->state = SROCE_WQE_PENDING;
	}
	qp->req.pkts_since_ackreq = 0;
}

/* The local ACK timer expired: retransmit from the oldest unacked PSN. */
void sroce_req_retrans_expired(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	unsigned long deadline;
	u32 i;

	sroce_assert_engine(qp);
	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    !qp->req.ack_wait)
		return;
	if (!qp->timeout || qp->req.rnr_wait || !sroce_req_outstanding(qp)) {
		qp->req.ack_wait = false;	/* the timer is off now */
		return;
	}
	/* pushed back since it was armed: not yet */
	deadline = qp->req.ack_wait_at + sroce_retrans_jiffies(qp);
	if (time_before(jiffies, deadline)) {
		mod_timer(&qp->retrans_timer, deadline);
		return;
	}
	/*
	 * A tail sent without AckReq was never asked to be acknowledged:
	 * ask once per progress, and count it a retry only if that fails.
	 */
	if (!qp->req.probed && qp->req.ackreq_owed) {
		/* first: the probe must not restart the clock (progress_at) */
		sroce_req_timer_push(qp);
		if (sroce_req_probe(qp)) {
			qp->req.probed = true;
			return;
		}
	}
	sroce_qp_count(qp, SROCE_CNT_RETRANS_TIMEOUT);
	qp->stats.retry_timeout++;
	trace_sroce_retrans(qp, qp->comp.psn, false);
	sroce_qp_dbg(qp, "ACK timeout at %#x (next %#x, max %#x), %u retries left\n",
		     qp->comp.psn, qp->req.psn, qp->req.max_psn,
		     qp->req.retry_cnt);
	if (qp->req.retry_cnt) {
		qp->req.retry_cnt--;
		/* after a timeout the same loss may be reported again */
		qp->comp.rewound = false;
		sroce_req_rewind(qp, qp->comp.psn);
		/* keep counting even if the resend has to wait for skb room */
		sroce_req_timer_push(qp);
		return;
	}
	/* retries exhausted: the oldest open WQE fails, the QP goes to ERR */
	for (i = sq->comp; i != sq->head; i++) {
		struct sroce_swqe *wqe = &sq->kwqe[i & (sq->slots - 1)];

		if (wqe->state != SROCE_WQE_DONE) {
			wqe->state = SROCE_WQE_DONE;
			wqe->status = IB_WC_RETRY_EXC_ERR;
			if (i == sq->req)
				sq->req++;
			break;
		}
	}
}
