// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder: checks request PSNs, places SEND payload into receive WQEs
 * and RDMA WRITE payload into registered memory, answers RDMA READs
 * (replaying them for duplicates), and generates ACK/NAK/RNR NAK.
 */
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "sroce/transport.h"

#define SROCE_GRH_BYTES	40

/* Atomics are atomic with respect to each other across the device (HCA). */
static DEFINE_SPINLOCK(sroce_atomic_lock);

void sroce_resp_reset(struct sroce_qp *qp)
{
	struct sroce_resp_state *r = &qp->resp;

	r->epsn = 0;
	r->epsn64 = 0;
	r->msn = 0;
	r->nak_seq_sent = false;
	r->in_send = false;
	r->in_write = false;
	r->have_rwqe = false;
	r->rcv_len = 0;
	r->res_head = 0;
	r->ack_pending = false;
	r->rd_cur = NULL;
	if (r->res)
		memset(r->res, 0, SROCE_MAX_RD_ATOMIC * sizeof(*r->res));
}

static void sroce_resp_post(struct sroce_qp *qp, struct sroce_pkt *pkt,
			    enum ib_wc_opcode op, enum ib_wc_status st,
			    u32 byte_len, bool has_imm)
{
	struct ib_wc wc = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = st,
		.opcode = op,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.src_qp = qp->dest_qpn,
		.port_num = 1,
	};

	if (has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(pkt->h.imm);
	} else if (st == IB_WC_SUCCESS && (pkt->h.info->mask & SROCE_M_IETH)) {
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = pkt->h.ieth_rkey;
	}
	qp->resp.have_rwqe = false;
	sroce_post_rcq(qp, &wc, pkt->h.bth.se);
}

/* Forget the message being received; a held receive WQE is kept. */
static void sroce_resp_msg_reset(struct sroce_resp_state *r)
{
	r->in_send = false;
	r->in_write = false;
	r->rcv_len = 0;
	r->rcv_sge = 0;
	r->rcv_sge_off = 0;
}


/* Send the coalesced ACK now: before any other response, and per pass. */
void sroce_resp_ack_flush(struct sroce_qp *qp)
{
	struct sroce_resp_state *r = &qp->resp;

	sroce_assert_engine(qp);
	/* an ACK must not overtake the READ responses still to go */
	if (!r->ack_pending || r->rd_cur)
		return;
	r->ack_pending = false;
	sroce_send_ack(qp, r->ack_psn,
		       sroce_aeth_syn_ack(SROCE_AETH_CREDIT_INVALID));
}

/*
 * Acknowledge through @psn.  ACKs are cumulative, so the requests of one
 * pass share one ACK; the requester asks (AckReq) at least every
 * SROCE_ACKREQ_EVERY packets, so it never waits long for one.
 */
static void sroce_resp_ack(struct sroce_qp *qp, u32 psn)
{
	qp->resp.ack_pending = true;
	qp->resp.ack_psn = psn;
}

bool sroce_resp_busy(struct sroce_qp *qp)
{
	return qp->resp.rd_cur;
}

static void sroce_resp_nak(struct sroce_qp *qp, u32 psn, u8 code)
{
	if (qp->type != IB_QPT_RC)
		return;
	sroce_resp_ack_flush(qp);
	sroce_qp_count(qp, code == SROCE_NAK_PSN_SEQ_ERR ?
			      SROCE_CNT_TX_NAK_SEQ : SROCE_CNT_TX_NAK_OTHER);
	qp->stats.nak_seq_sent += code == SROCE_NAK_PSN_SEQ_ERR;
	if (code != SROCE_NAK_PSN_SEQ_ERR)
		sroce_qp_dbg(qp, "NAK code %u for psn %#x\n", code, psn);
	sroce_send_ack(qp, psn, sroce_aeth_syn_nak(code));
}

/*
 * A responder-detected error in request @pkt.  RC: NAK it with @nak,
 * complete the receive WQE we hold with @st and end the QP, raising the
 * affiliated event 10.10 assigns.  UC has no NAK and the sender is at
 * fault: the message is dropped and the QP goes on, unless @local (a
 * problem with our own receive WQE, which C10-148 makes a QP error).
 */
static void sroce_resp_err(struct sroce_qp *qp, struct sroce_pkt *pkt,
			   u8 nak, enum ib_wc_status st, bool local,
			   bool *fatal)
{
	struct sroce_resp_state *r = &qp->resp;

	if (qp->type == IB_QPT_UC && !local) {
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_UC_MSG);
		sroce_resp_msg_reset(r);
		return;
	}
	sroce_resp_nak(qp, pkt->h.bth.psn, nak);
	if (nak == SROCE_NAK_INVALID_REQ)
		r->fail_ev = IB_EVENT_QP_REQ_ERR;
	else if (nak == SROCE_NAK_REM_ACCESS_ERR)
		r->fail_ev = IB_EVENT_QP_ACCESS_ERR;
	else if (!r->have_rwqe)
		r->fail_ev = IB_EVENT_QP_FATAL;
	/* otherwise the error completion below tells the consumer */
	if (r->have_rwqe)
		sroce_resp_post(qp, pkt, IB_WC_RECV, st ?: IB_WC_WR_FLUSH_ERR,
				0, false);
	*fatal = true;
}

static int sroce_resp_get_rwqe(struct sroce_qp *qp)
{
	int err;

	if (qp->resp.have_rwqe)
		return 0;
	err = sroce_rq_fetch(qp, &qp->resp.rwqe);
	if (err == -ENOENT)
		return err;
	/* a malformed WQE is held too: the caller completes it in error */
	qp->resp.have_rwqe = true;
	qp->resp.rcv_len = 0;
	qp->resp.rcv_sge = 0;
	qp->resp.rcv_sge_off = 0;
	return err;
}

/*
 * SEND and WRITE-with-immediate: the receive WQE the message lands in.
 * None posted is an RNR NAK; a malformed one completes in error and ends
 * the QP.  Returns true when the caller may go on.
 */
static bool sroce_resp_take_rwqe(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 bool *fatal, bool *rnr)
{
	int err = sroce_resp_get_rwqe(qp);

	if (err == -ENOENT) {
		*rnr = true;
		return false;
	}
	if (err) {
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_OP_ERR,
			       IB_WC_LOC_QP_OP_ERR, true, fatal);
		return false;
	}
	return true;
}

/* UD and GSI: one packet, one receive WQE, 40 bytes of GRH first. */
static void sroce_resp_ud(struct sroce_qp *qp, struct sroce_pkt *pkt,
			  bool *fatal)
{
	struct sroce_resp_state *r = &qp->resp;
	u32 len = pkt->h.payload_len;
	u8 grh[SROCE_GRH_BYTES] = {};
	struct ib_wc wc = {};
	int err;

	if (pkt->h.deth.qkey != qp->qkey) {
		/* C10-14: silent drop */
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_QKEY);
		return;
	}
	err = sroce_resp_get_rwqe(qp);
	if (err == -ENOENT) {
		/* UD has no RNR: a datagram without a receive WQE is lost */
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_NO_RWQE);
		return;
	}
	if (err) {
		sroce_resp_err(qp, pkt, 0, IB_WC_LOC_QP_OP_ERR, true, fatal);
		return;
	}
	if (len + SROCE_GRH_BYTES > r->rwqe.length) {
		/*
		 * The sender, not this QP, is at fault: the datagram is lost
		 * and the WQE waits for the next one.  Failing the QP would let
		 * one packet to QP1 end rdma_cm on the device.
		 */
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_LENGTH);
		return;
	}
	wc.status = IB_WC_SUCCESS;
	if (pkt->net_type == SROCE_NET_TYPE_IPV6)
		memcpy(grh, ipv6_hdr(pkt->skb), SROCE_GRH_BYTES);
	else
		memcpy(grh + 20, ip_hdr(pkt->skb), 20);
	r->rcv_sge = 0;
	r->rcv_sge_off = 0;
	err = sroce_sge_write(qp, qp->recv_pd, r->rwqe.sge,
			      r->rwqe.num_sge, &r->rcv_sge,
			      &r->rcv_sge_off, grh, SROCE_GRH_BYTES);
	if (!err)
		err = sroce_sge_copy_in(qp, qp->recv_pd, r->rwqe.sge,
					r->rwqe.num_sge, &r->rcv_sge,
					&r->rcv_sge_off, pkt->skb,
					pkt->payload_off, len);
	if (err)
		wc.status = IB_WC_LOC_PROT_ERR;
	wc.wr_id = r->rwqe.wr_id;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = len + SROCE_GRH_BYTES;
	wc.qp = &qp->ibqp;
	wc.src_qp = pkt->h.deth.sqpn;
	wc.port_num = 1;
	wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	wc.network_hdr_type = pkt->net_type == SROCE_NET_TYPE_IPV6 ?
			      RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
	if (pkt->h.info->mask & SROCE_M_IMMDT) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(pkt->h.imm);
	}
	r->have_rwqe = false;
	sroce_post_rcq(qp, &wc, pkt->h.bth.se);
	/* a bad L_Key in the WQE is a local error: it ends the QP (C10-153) */
	if (wc.status != IB_WC_SUCCESS)
		*fatal = true;
}

/* RC requests are taken in order: epsn only moves forward. */
static void sroce_resp_epsn_set(struct sroce_resp_state *r, u32 psn)
{
	r->epsn64 += (psn - r->epsn) & SROCE_PSN_MASK;
	r->epsn = psn;
}

/*
 * The READ/atomic a duplicate at @psn repeats.  Compared on the 64-bit
 * scale: after 2^24 PSNs an old entry has the same 24-bit PSNs as a new
 * one and would answer with another request's data or result.
 */
static struct sroce_rd_res *sroce_res_find(struct sroce_qp *qp, u32 psn)
{
	struct sroce_resp_state *r = &qp->resp;
	u64 psn64 = r->epsn64 + sroce_psn_diff(psn, r->epsn);
	u32 i;

	for (i = 0; i < SROCE_MAX_RD_ATOMIC; i++) {
		struct sroce_rd_res *res = &r->res[i];
		u64 last64;

		if (!res->valid)
			continue;
		last64 = res->first64 +
			 sroce_psn_diff(res->last_psn, res->first_psn);
		if (psn64 >= res->first64 && psn64 <= last64)
			return res;
	}
	return NULL;
}

/* End an access begun by sroce_resp_rkey(). */
static void sroce_resp_put(struct sroce_mr *mr, struct sroce_mw *mw)
{
	if (mw)
		sroce_mw_put(mr, mw);
	else
		sroce_mr_put(mr);
}

/*
 * Begin a remote access through @rkey: the region in *out, and in *mwp the
 * window it went through (NULL for a region's own key).  End it with
 * sroce_resp_put().
 */
static int sroce_resp_rkey(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
			   u32 access, struct sroce_mr **out,
			   struct sroce_mw **mwp)
{
	struct sroce_mr *mr;

	*out = NULL;
	*mwp = NULL;
	if (!(qp->access & access))
		return -EACCES;
	if (!len)
		return 0;
	if (sroce_key_is_mw(rkey)) {
		/* the window's rights replace the region's (10.6.7.2.2) */
		mr = sroce_mw_get(qp, rkey, va, len, access, mwp);
		access = 0;
	} else {
		mr = sroce_mr_get(qp->sdev, rkey);
	}
	if (!mr)
		return -EACCES;
	if (sroce_mr_check(mr, qp->pd, va, len, access)) {
		sroce_resp_put(mr, *mwp);
		*mwp = NULL;
		return -EACCES;
	}
	*out = mr;
	return 0;
}

/*
 * The oldest READ with responses still to send.  Entries sit in the ring in
 * PSN order, but a duplicate can re-arm an older one, so compare PSNs.
 */
static struct sroce_rd_res *sroce_resp_rd_next(struct sroce_qp *qp)
{
	struct sroce_rd_res *best = NULL;
	u32 i;

	for (i = 0; i < SROCE_MAX_RD_ATOMIC; i++) {
		struct sroce_rd_res *res = &qp->resp.res[i];

		if (res->valid && res->pending &&
		    (!best || sroce_psn_before(res->first_psn, best->first_psn)))
			best = res;
	}
	return best;
}

/*
 * (Re)arm the responses of @res from @psn.  READs are answered in PSN
 * order: one older than the one going out takes over, a later one waits.
 */
static void sroce_resp_read_arm(struct sroce_qp *qp, struct sroce_rd_res *res,
				u32 psn)
{
	struct sroce_resp_state *r = &qp->resp;

	sroce_qp_count(qp, SROCE_CNT_TX_READ_RESP_START);
	/* the coalesced ACK covers older requests: it goes first */
	sroce_resp_ack_flush(qp);
	res->pending = true;
	res->no_train = false;
	res->start_psn = psn;
	res->next_psn = psn;
	if (!r->rd_cur || sroce_psn_before(res->first_psn, r->rd_cur->first_psn))
		r->rd_cur = res;
}

/* A READ response by reference to @mr's pages; NULL: copy it instead. */
static struct sk_buff *sroce_resp_read_ref(struct sroce_qp *qp,
					   struct sroce_pkt_hdrs *h,
					   struct sroce_mr *mr, u64 va, u32 len)
{
	struct sk_buff *skb = sroce_build_pkt_ref(qp, &qp->av, h, len);

	if (skb && (sroce_pkt_ref_mr(skb, mr, va, len) ||
		    sroce_pkt_ref_end(skb, h))) {
		kfree_skb(skb);
		skb = NULL;
	}
	return skb;
}

/*
 * Loopback, by reference: the next whole-MTU responses of @res before its
 * last in one skb (struct sroce_train), which the requester's completer
 * takes one by one.  Returns the packets sent, 0: send one alone.
 */
static u32 sroce_resp_read_train(struct sroce_qp *qp,
				 struct sroce_rd_res *res, struct sroce_mr *mr,
				 u32 mtu, int budget)
{
	u32 n = sroce_psn_diff(res->last_psn, res->next_psn);
	u32 off = sroce_psn_diff(res->next_psn, res->first_psn) * mtu;
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;

	n = min3(n, (u32)SROCE_TRAIN_PKTS, (u32)SROCE_TRAIN_BYTES / mtu);
	if (n < 2 || budget < 2 || res->no_train ||
	    !sroce_pkt_ref_ok(qp, &qp->av, mtu))
		return 0;
	n = min_t(u32, n, budget);
	if (res->next_psn == res->start_psn) {
		h.bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST;
		h.aeth.syndrome = sroce_aeth_syn_ack(SROCE_AETH_CREDIT_INVALID);
		h.aeth.msn = res->msn & SROCE_PSN_MASK;
	} else {
		h.bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	}
	h.bth.dqpn = qp->dest_qpn;
	h.bth.psn = res->next_psn;
	skb = sroce_resp_read_ref(qp, &h, mr, res->va + off, n * mtu);
	if (!skb) {
		res->no_train = true;	/* too many pieces, memory: one by one */
		return 0;
	}
	sroce_train(skb)->pkts = n;
	sroce_train(skb)->seg = mtu;
	sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
	res->next_psn = sroce_psn_add(res->next_psn, n);
	return n;
}

/*
 * Send READ responses from the cursor, up to *budget packets and as skb
 * room allows; the engine calls again until none are pending, so a 2 GiB
 * READ or a storm of duplicates costs bounded work per pass.  Returns
 * false when it could send nothing (no skb memory or room).
 */
bool sroce_resp_read_run(struct sroce_qp *qp, int *budget)
{
	struct sroce_resp_state *r = &qp->resp;
	struct sroce_rd_res *res;
	bool sent = false;

	sroce_assert_engine(qp);
	while ((res = r->rd_cur) && *budget > 0) {
		u32 mtu = qp->mtu;
		struct sroce_mr *mr = NULL;
		struct sroce_mw *mw = NULL;

		/* the region may have gone since the request: check it again */
		if (res->length && sroce_resp_rkey(qp, res->rkey, res->va,
						    res->length,
						    IB_ACCESS_REMOTE_READ, &mr, &mw)) {
			res->pending = false;
			r->rd_cur = NULL;
			sroce_resp_nak(qp, res->next_psn, SROCE_NAK_REM_ACCESS_ERR);
			sroce_qp_fail(qp, IB_EVENT_QP_ACCESS_ERR);
			return true;
		}
		while (*budget > 0 && !sroce_psn_after(res->next_psn, res->last_psn)) {
			u32 off = sroce_psn_diff(res->next_psn, res->first_psn) * mtu;
			u32 len = min(mtu, res->length - off);
			bool first = res->next_psn == res->start_psn;
			bool last = res->next_psn == res->last_psn;
			struct sroce_pkt_hdrs h = {};
			struct sk_buff *skb;
			u8 *payload;

			if (!sroce_tx_room(qp))
				break;
			if (!last && !mw && len == mtu) {
				u32 n = sroce_resp_read_train(qp, res, mr, mtu,
							      *budget);

				if (n) {
					*budget -= n;
					sent = true;
					continue;
				}
			}
			if (first && last)
				h.bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY;
			else if (first)
				h.bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST;
			else if (last)
				h.bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_LAST;
			else
				h.bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
			h.bth.dqpn = qp->dest_qpn;
			h.bth.psn = res->next_psn;
			h.aeth.syndrome = sroce_aeth_syn_ack(SROCE_AETH_CREDIT_INVALID);
			h.aeth.msn = res->msn & SROCE_PSN_MASK;
			skb = NULL;
			if (len && !mw && sroce_pkt_ref_ok(qp, &qp->av, len))
				skb = sroce_resp_read_ref(qp, &h, mr,
							  res->va + off, len);
			if (!skb) {
				skb = sroce_build_pkt(qp, &qp->av, &h, len,
						      &payload);
				if (!skb)
					break;
				if (len && sroce_mr_copy(mr, res->va + off,
							 payload, len, false)) {
					kfree_skb(skb);
					break;
				}
			}
			sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache,
				       qp->sport, skb);
			res->next_psn = sroce_psn_add(res->next_psn, 1);
			(*budget)--;
			sent = true;
		}
		if (mr)
			sroce_resp_put(mr, mw);
		if (!sroce_psn_after(res->next_psn, res->last_psn))
			return sent;	/* out of budget, room or memory */
		res->pending = false;
		r->rd_cur = sroce_resp_rd_next(qp);
	}
	/* every response is out: the ACKs held behind them may go */
	if (!r->rd_cur)
		sroce_resp_ack_flush(qp);
	return sent || !r->rd_cur;
}

/*
 * Take a READ request.  Returns false, having done nothing, when it must
 * be refused while earlier READ responses are still going out: its NAK
 * may not overtake them.
 */
static bool sroce_resp_read(struct sroce_qp *qp, struct sroce_pkt *pkt,
			    bool *fatal)
{
	struct sroce_resp_state *r = &qp->resp;
	const struct sroce_reth *reth = &pkt->h.reth;
	u32 npkts = reth->len ? DIV_ROUND_UP(reth->len, qp->mtu) : 1;
	struct sroce_rd_res *res;
	struct sroce_mr *mr;
	struct sroce_mw *mw;

	if (reth->len > (1U << 31) ||
	    sroce_resp_rkey(qp, reth->rkey, reth->va, reth->len,
			    IB_ACCESS_REMOTE_READ, &mr, &mw)) {
		if (r->rd_cur)
			return false;
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return true;
	}
	if (mr)
		sroce_resp_put(mr, mw);
	res = &r->res[r->res_head];
	r->res_head = (r->res_head + 1) % max_t(u32, qp->max_dest_rd_atomic, 1);
	res->valid = true;
	res->opcode = pkt->h.bth.opcode;
	res->first_psn = pkt->h.bth.psn;
	res->first64 = r->epsn64;
	res->last_psn = sroce_psn_add(res->first_psn, npkts - 1);
	res->va = reth->va;
	res->rkey = reth->rkey;
	res->length = reth->len;
	r->msn++;
	res->msn = r->msn;
	sroce_resp_epsn_set(r, sroce_psn_add(res->last_psn, 1));
	sroce_resp_read_arm(qp, res, res->first_psn);
	return true;
}

/*
 * A one-packet answer: an ATOMIC Acknowledge carrying @orig, or (A19) the
 * empty RDMA READ Response Only that answers an ATOMIC WRITE or a FLUSH.
 */
static void sroce_resp_reply1(struct sroce_qp *qp, u8 opcode, u32 psn,
			      u32 msn, u64 orig)
{
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;
	u8 *payload;

	h.bth.opcode = opcode;
	h.bth.dqpn = qp->dest_qpn;
	h.bth.psn = psn;
	h.aeth.syndrome = sroce_aeth_syn_ack(SROCE_AETH_CREDIT_INVALID);
	h.aeth.msn = msn & SROCE_PSN_MASK;
	h.atmack.orig = orig;
	sroce_resp_ack_flush(qp);
	skb = sroce_build_pkt(qp, &qp->av, &h, 0, &payload);
	if (skb)
		sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
}

/*
 * An atomic, ATOMIC WRITE or FLUSH was executed: it holds a responder
 * resource whose answer a duplicate gets again, never a re-execution (an
 * old atomic write replayed would undo later writes).  Answer it now.
 */
static void sroce_resp_executed1(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 u64 orig)
{
	struct sroce_resp_state *r = &qp->resp;
	struct sroce_rd_res *res = &r->res[r->res_head];
	u32 psn = pkt->h.bth.psn;
	u8 op = pkt->h.info->mask & SROCE_M_ATOMIC ?
		SROCE_OP_RC_ATOMIC_ACKNOWLEDGE :
		SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY;

	r->res_head = (r->res_head + 1) % max_t(u32, qp->max_dest_rd_atomic, 1);
	res->valid = true;
	res->pending = false;
	res->opcode = pkt->h.bth.opcode;
	res->first_psn = psn;
	res->first64 = r->epsn64;
	res->last_psn = psn;
	res->length = 0;
	res->atomic_orig = orig;
	r->msn++;
	res->msn = r->msn;
	sroce_resp_epsn_set(r, sroce_psn_add(psn, 1));
	sroce_resp_reply1(qp, op, psn, r->msn, orig);
}

static void sroce_resp_atomic(struct sroce_qp *qp, struct sroce_pkt *pkt,
			      bool *fatal)
{
	const struct sroce_atmeth *a = &pkt->h.atmeth;
	struct sroce_mr *mr;
	struct sroce_mw *mw;
	u64 *p, orig;

	if (a->va & 7) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ, 0, false, fatal);
		return;
	}
	if (sroce_resp_rkey(qp, a->rkey, a->va, 8, IB_ACCESS_REMOTE_ATOMIC,
			    &mr, &mw)) {
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return;
	}
	p = sroce_mr_atomic_ptr(mr, a->va);
	if (!p) {
		sroce_resp_put(mr, mw);
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return;
	}
	spin_lock(&sroce_atomic_lock);
	orig = READ_ONCE(*p);
	if (pkt->h.bth.opcode == SROCE_OP_RC_COMPARE_SWAP) {
		if (orig == a->cmp)
			WRITE_ONCE(*p, a->swap_add);
	} else {
		WRITE_ONCE(*p, orig + a->swap_add);
	}
	spin_unlock(&sroce_atomic_lock);
	sroce_resp_put(mr, mw);

	sroce_resp_executed1(qp, pkt, orig);
}

#if SROCE_HAVE_MEM_PLACEMENT
/*
 * ATOMIC WRITE: 8 bytes to an 8-byte aligned VA, through an R_Key with
 * remote write access (as rdma_rxe checks it), stored in one go.
 */
static void sroce_resp_atomic_write(struct sroce_qp *qp, struct sroce_pkt *pkt,
				    bool *fatal)
{
	const struct sroce_reth *reth = &pkt->h.reth;
	struct sroce_mr *mr;
	struct sroce_mw *mw;
	u64 *p, val;

	if (reth->len != sizeof(val) || pkt->h.payload_len != sizeof(val) ||
	    (reth->va & 7)) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ, 0, false, fatal);
		return;
	}
	if (sroce_resp_rkey(qp, reth->rkey, reth->va, sizeof(val),
			    IB_ACCESS_REMOTE_WRITE, &mr, &mw)) {
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return;
	}
	p = sroce_mr_atomic_ptr(mr, reth->va);
	if (!p || skb_copy_bits(pkt->skb, pkt->payload_off, &val,
				sizeof(val))) {
		sroce_resp_put(mr, mw);
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return;
	}
	/* under the atomics' lock: a compare-and-swap never sees it half done */
	spin_lock(&sroce_atomic_lock);
	WRITE_ONCE(*p, val);
	spin_unlock(&sroce_atomic_lock);
	sroce_resp_put(mr, mw);
	sroce_resp_executed1(qp, pkt, 0);
}

/*
 * FLUSH of a range or of the whole region.  Placement is by CPU stores
 * into host RAM, so a full barrier makes everything placed before it
 * globally visible.  No QP or region can have persistent-flush access
 * (the device does not advertise it), so a persistent FLUSH always fails.
 */
static void sroce_resp_flush(struct sroce_qp *qp, struct sroce_pkt *pkt,
			     bool *fatal)
{
	const struct sroce_reth *reth = &pkt->h.reth;
	u8 plt = pkt->h.feth.plt, sel = pkt->h.feth.sel;
	bool whole = sel == IB_FLUSH_MR;
	u32 access = 0, len = whole ? 0 : reth->len;
	struct sroce_mw *mw = NULL;
	struct sroce_mr *mr;

	if (sel > IB_FLUSH_MR || !plt ||
	    (plt & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT))) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ, 0, false, fatal);
		return;
	}
	if (plt & IB_FLUSH_GLOBAL)
		access |= IB_ACCESS_FLUSH_GLOBAL;
	if (plt & IB_FLUSH_PERSISTENT)
		access |= IB_ACCESS_FLUSH_PERSISTENT;
	/* the QP must allow every placement type asked for, as the region must */
	if ((qp->access & access) != access) {
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return;
	}
	if (sroce_key_is_mw(reth->rkey))
		mr = sroce_mw_get(qp, reth->rkey, reth->va, len, access, &mw);
	else
		mr = sroce_mr_get(qp->sdev, reth->rkey);
	/* through a window its rights were checked, the region's are not */
	if (!mr || sroce_mr_check(mr, qp->pd,
				  whole && !mw ? mr->iova : reth->va, len,
				  mw ? 0 : access)) {
		if (mr)
			sroce_resp_put(mr, mw);
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR, 0, false,
			       fatal);
		return;
	}
	/*
	 * Everything this QP placed is visible before the response that says
	 * so is built; the requester learns of it only through that response.
	 */
	smp_mb();
	sroce_resp_put(mr, mw);
	sroce_resp_executed1(qp, pkt, 0);
}
#endif

static void sroce_resp_send(struct sroce_qp *qp, struct sroce_pkt *pkt,
			    bool *fatal, bool *rnr)
{
	struct sroce_resp_state *r = &qp->resp;
	u32 mask = pkt->h.info->mask, len = pkt->h.payload_len;
	int err;

	if (mask & SROCE_M_FIRST) {
		if (!sroce_resp_take_rwqe(qp, pkt, fatal, rnr))
			return;
		r->in_send = !(mask & SROCE_M_LAST);
	}
	if (len > qp->mtu || (!(mask & SROCE_M_LAST) && len != qp->mtu)) {
		/* e.g. the peer's path MTU is larger than ours */
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
			       IB_WC_LOC_LEN_ERR, false, fatal);
		return;
	}
	if (len > r->rwqe.length - r->rcv_len) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
			       IB_WC_LOC_LEN_ERR, false, fatal);
		return;
	}
	err = sroce_sge_copy_in(qp, qp->recv_pd, r->rwqe.sge, r->rwqe.num_sge,
				&r->rcv_sge, &r->rcv_sge_off, pkt->skb,
				pkt->payload_off, len);
	if (err) {
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_OP_ERR,
			       IB_WC_LOC_PROT_ERR, true, fatal);
		return;
	}
	r->rcv_len += len;
	/*
	 * Invalidate once the message is in (o10-37.2.21).  A key that may not
	 * be invalidated stays as it is, the receive fails and the QP ends
	 * (o10-37.2.24).
	 */
	if ((mask & SROCE_M_IETH) &&
	    sroce_mr_invalidate(qp, pkt->h.ieth_rkey)) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
			       IB_WC_REM_INV_REQ_ERR, false, fatal);
		return;
	}
	if (mask & SROCE_M_LAST) {
		r->in_send = false;
		r->msn++;
		sroce_resp_post(qp, pkt, IB_WC_RECV, IB_WC_SUCCESS, r->rcv_len,
				mask & SROCE_M_IMMDT);
	}
}

static void sroce_resp_write(struct sroce_qp *qp, struct sroce_pkt *pkt,
			     bool *fatal, bool *rnr)
{
	struct sroce_resp_state *r = &qp->resp;
	u32 mask = pkt->h.info->mask, len = pkt->h.payload_len;
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw = NULL;

	/* take the receive WQE first so an RNR NAK has no side effects */
	if ((mask & SROCE_M_IMMDT) && !sroce_resp_take_rwqe(qp, pkt, fatal, rnr))
		return;
	if (mask & SROCE_M_FIRST) {
		const struct sroce_reth *reth = &pkt->h.reth;

		if (reth->len > (1U << 31)) {
			sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
				       IB_WC_REM_INV_REQ_ERR, false, fatal);
			return;
		}
		r->wr_rkey = reth->rkey;
		r->wr_va = reth->va;
		r->wr_resid = reth->len;
		r->wr_imm = reth->len;	/* byte_len of a write with immediate */
		r->in_write = !(mask & SROCE_M_LAST);
	}
	if (len > qp->mtu || len > r->wr_resid ||
	    ((mask & SROCE_M_LAST) && len != r->wr_resid) ||
	    (!(mask & SROCE_M_LAST) && len != qp->mtu)) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
			       IB_WC_REM_INV_REQ_ERR, false, fatal);
		return;
	}
	/*
	 * The R_Key is checked for every packet: a region deregistered in the
	 * middle of a write is never written again.
	 */
	if (sroce_resp_rkey(qp, r->wr_rkey, r->wr_va, len,
			    IB_ACCESS_REMOTE_WRITE, &mr, &mw) ||
	    (len && sroce_mr_from_skb(mr, r->wr_va, pkt->skb,
				      pkt->payload_off, len))) {
		if (mr)
			sroce_resp_put(mr, mw);
		/* a held write-with-immediate WQE: 11.6.2's Local Access Error */
		sroce_resp_err(qp, pkt, SROCE_NAK_REM_ACCESS_ERR,
			       IB_WC_LOC_ACCESS_ERR, false, fatal);
		return;
	}
	if (mr)
		sroce_resp_put(mr, mw);
	r->wr_va += len;
	r->wr_resid -= len;
	if (mask & SROCE_M_LAST) {
		r->in_write = false;
		r->msn++;
		if (mask & SROCE_M_IMMDT)
			sroce_resp_post(qp, pkt, IB_WC_RECV_RDMA_WITH_IMM,
					IB_WC_SUCCESS, r->wr_imm, true);
	}
}

/* In-order check of a multi-packet message's opcode sequence. */
static bool sroce_resp_seq_ok(struct sroce_qp *qp, u32 mask)
{
	struct sroce_resp_state *r = &qp->resp;
	bool mid = mask & (SROCE_M_MIDDLE | SROCE_M_LAST) &&
		   !(mask & SROCE_M_FIRST);

	if (r->in_send)
		return (mask & SROCE_M_SEND) && mid;
	if (r->in_write)
		return (mask & SROCE_M_WRITE) && mid;
	return !mid;
}

/* A request before the expected PSN: answer it again, never re-execute it. */
static void sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	u32 psn = pkt->h.bth.psn;
	struct sroce_rd_res *res;

	sroce_qp_count(qp, SROCE_CNT_RX_DUP_REQ);
	if (pkt->h.info->mask & (SROCE_M_FLUSH | SROCE_M_ATOMIC_WRITE)) {
		res = sroce_res_find(qp, psn);
		if (res && res->opcode == pkt->h.bth.opcode)
			sroce_resp_reply1(qp, SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY,
					  res->first_psn, res->msn, 0);
		return;
	}
	if (pkt->h.info->mask & (SROCE_M_READ | SROCE_M_ATOMIC)) {
		res = sroce_res_find(qp, psn);
		/* a copy asks for what its original did, or it is forged */
		if (!res || !(pkt->h.info->mask & SROCE_M_READ) !=
			    (res->opcode != SROCE_OP_RC_RDMA_READ_REQUEST) ||
		    res->opcode == SROCE_OP_RC_FLUSH ||
		    res->opcode == SROCE_OP_RC_ATOMIC_WRITE)
			return;
		if (pkt->h.info->mask & SROCE_M_ATOMIC) {
			sroce_resp_reply1(qp, SROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
					  res->first_psn, qp->resp.msn,
					  res->atomic_orig);
			return;
		}
		/*
		 * Responses from @psn on are still to go: a copy of the request
		 * sent before they arrived, nothing to do.  Otherwise they were
		 * lost (or this copy is stale): send them again.
		 */
		sroce_qp_dbg(qp, "dup READ %#x of [%#x..%#x] %s next %#x, cur %#x\n",
			     psn, res->first_psn, res->last_psn,
			     res->pending ? "pending" : "done", res->next_psn,
			     qp->resp.rd_cur ? qp->resp.rd_cur->first_psn : 0);
		if (res->pending && !sroce_psn_before(psn, res->next_psn))
			return;
		sroce_resp_read_arm(qp, res, psn);
		return;
	}
	/* re-acknowledge: the earlier ACK may have been lost */
	if (pkt->h.bth.ackreq)
		sroce_resp_ack(qp, sroce_psn_add(qp->resp.epsn, SROCE_PSN_MASK));
}

/*
 * May a new request at the expected PSN run now?  Only a READ may pass
 * the READ responses still going out (it queues behind them, if its
 * ring slot is free); anything else must not execute or be acknowledged
 * before them.
 */
static bool sroce_resp_may_start(struct sroce_qp *qp, u32 mask)
{
	struct sroce_resp_state *r = &qp->resp;

	if (!r->rd_cur)
		return true;
	return (mask & SROCE_M_READ) && !r->res[r->res_head].pending;
}

/* A copy of an RC request already taken: it may pass a waiting new one. */
bool sroce_resp_is_dup(struct sroce_pkt *pkt)
{
	struct sroce_qp *qp = pkt->qp;

	return qp->type == IB_QPT_RC && pkt->h.bth.dqpn == qp->qpn &&
	       sroce_psn_before(pkt->h.bth.psn, qp->resp.epsn);
}

/*
 * Handle one request packet.  Returns false, having done nothing, when
 * READ responses are still going out and @pkt is a new request that must
 * not pass them: it waits at the head of the queue.
 */
bool sroce_resp_rcv(struct sroce_pkt *pkt)
{
	struct sroce_qp *qp = pkt->qp;
	struct sroce_resp_state *r = &qp->resp;
	u32 mask = pkt->h.info->mask, psn = pkt->h.bth.psn;
	bool fatal = false, rnr = false, rc = qp->type == IB_QPT_RC;
	s32 diff;

	sroce_assert_engine(qp);
	if (qp->state < IB_QPS_RTR || qp->state == IB_QPS_ERR) {
		sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_QP_STATE);
		goto unlock;
	}
	if (sroce_qp_is_ud(qp)) {
		sroce_resp_ud(qp, pkt, &fatal);
		goto unlock;
	}
	if (pkt->h.bth.dqpn != qp->qpn)
		goto unlock;

	diff = sroce_psn_diff(psn, r->epsn);
	if (diff < 0 && rc) {
		sroce_resp_duplicate(qp, pkt);
		goto unlock;
	}
	if (rc && !sroce_resp_may_start(qp, diff ? 0 : mask))
		return false;
	if (diff != 0) {
		sroce_qp_count(qp, SROCE_CNT_RX_OOS_REQ);
		if (rc) {
			if (!r->nak_seq_sent) {
				sroce_qp_dbg(qp, "request %#x (opcode %u), expected %#x: NAK\n",
					     psn, pkt->h.bth.opcode, r->epsn);
				sroce_resp_nak(qp, r->epsn,
					       SROCE_NAK_PSN_SEQ_ERR);
			}
			r->nak_seq_sent = true;
			goto unlock;
		}
		/* UC: the message in progress is lost; resync on a new one */
		sroce_resp_msg_reset(r);
		if (!(mask & SROCE_M_FIRST))
			goto unlock;
		r->epsn = psn;
	}
	if (!sroce_resp_seq_ok(qp, mask)) {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
			       IB_WC_REM_INV_REQ_ERR, false, &fatal);
		goto unlock;
	}

	if (mask & SROCE_M_SEND) {
		sroce_resp_send(qp, pkt, &fatal, &rnr);
	} else if (mask & SROCE_M_WRITE) {
		sroce_resp_write(qp, pkt, &fatal, &rnr);
	} else if ((mask & SROCE_M_READ) && rc) {
		if (!sroce_resp_read(qp, pkt, &fatal))
			return false;
	} else if ((mask & SROCE_M_ATOMIC) && rc) {
		sroce_resp_atomic(qp, pkt, &fatal);
#if SROCE_HAVE_MEM_PLACEMENT
	} else if ((mask & SROCE_M_ATOMIC_WRITE) && rc) {
		sroce_resp_atomic_write(qp, pkt, &fatal);
	} else if ((mask & SROCE_M_FLUSH) && rc) {
		sroce_resp_flush(qp, pkt, &fatal);
#endif
	} else {
		sroce_resp_err(qp, pkt, SROCE_NAK_INVALID_REQ,
			       IB_WC_REM_INV_REQ_ERR, false, &fatal);
	}

	if (rnr) {
		if (rc) {
			sroce_qp_count(qp, SROCE_CNT_TX_RNR_NAK);
			qp->stats.rnr_nak_sent++;
			sroce_qp_dbg(qp, "no receive WQE for psn %#x: RNR NAK\n",
				     psn);
			sroce_resp_ack_flush(qp);
			sroce_send_ack(qp, psn,
				       sroce_aeth_syn_rnr(qp->min_rnr_timer));
		} else {
			/* UC has no RNR: the message is lost */
			sroce_pkt_drop(pkt, SROCE_CNT_RX_DROP_NO_RWQE);
		}
		goto unlock;
	}
	/* a completion its CQ could not take ended the QP: not acknowledged */
	if (fatal || qp->state == IB_QPS_ERR)
		goto unlock;
	r->nak_seq_sent = false;
	/* these moved the expected PSN themselves */
	if (!(mask & (SROCE_M_READ | SROCE_M_ATOMIC | SROCE_M_FLUSH |
		      SROCE_M_ATOMIC_WRITE))) {
		sroce_resp_epsn_set(r, sroce_psn_add(psn, 1));
		if (rc && pkt->h.bth.ackreq)
			sroce_resp_ack(qp, psn);
	}
unlock:
	/* responder-detected errors end the QP (and an RC connection) */
	if (fatal) {
		sroce_qp_fail(qp, r->fail_ev);
		r->fail_ev = 0;
	}
	return true;
}
