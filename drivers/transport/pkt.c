// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packet construction and SGE data movement shared by the engines.  Data
 * moves page by page between registered memory and skbs: no bounce buffer.
 */
#include <linux/skbuff.h>
#include <linux/jiffies.h>

#include "sroce/transport.h"
#include "sroce/trace.h"

static struct sk_buff *sroce_build(struct sroce_qp *qp,
				   const struct sroce_av *av,
				   struct sroce_pkt_hdrs *h, u32 payload_len,
				   u8 **payload)
{
	const struct sroce_opcode_info *info = sroce_opcode_info(h->bth.opcode);
	u8 pad = sroce_pad_len(payload_len);
	struct sk_buff *skb;
	u8 *bth;

	if (WARN_ON_ONCE(!info))
		return NULL;
	/* by reference (!payload): the skb's linear part ends with the headers */
	skb = sroce_pkt_alloc(qp, av, info->hdr_len,
			      payload ? payload_len + pad : 0, &bth);
	if (unlikely(!skb))
		return NULL;
	h->bth.padcnt = pad;
	h->bth.tver = SROCE_BTH_TVER;
	h->bth.pkey = SROCE_PKEY_DEFAULT;
	sroce_hdrs_build(bth, h);
	if (!payload) {
		skb_trim(skb, skb->len - SROCE_ICRC_BYTES);
		return skb;
	}
	*payload = bth + info->hdr_len;
	if (pad)
		memset(*payload + payload_len, 0, pad);
	return skb;
}

struct sk_buff *sroce_build_pkt(struct sroce_qp *qp, const struct sroce_av *av,
				struct sroce_pkt_hdrs *h, u32 payload_len,
				u8 **payload)
{
	return sroce_build(qp, av, h, payload_len, payload);
}

/*
 * Loopback zero copy.  A packet to our own GID never reaches a netdev:
 * the peer QP's engine copies its payload into place.  So an RC request
 * (SEND, WRITE) of a user QP may carry its payload, from SROCE_ZCOPY_MIN
 * bytes up (less is cheaper to copy), as references to the
 * sender's pinned user pages instead of a copy: one copy per byte
 * instead of two.  The pages must not go back to the consumer while a
 * packet can still read them.  RC completes a WQE only when the
 * responder has placed its data (a UD or UC send completes as it leaves);
 * a failed WQE, a flush or RESET waits for the QP's zc_out to drain, and
 * the packet holds its MR, so deregistration waits for it too
 * (drivers/net/tx.c).  A READ response of such a QP may reference the
 * responder's user MR the same way (sroce_pkt_ref_mr): table 79 lets a
 * READ return data that later requests changed, and a user MR cannot be
 * invalidated, only deregistered.  Not through a memory window, which
 * can be invalidated under the packet.
 */
bool sroce_pkt_ref_ok(const struct sroce_qp *qp, const struct sroce_av *av,
		      u32 len)
{
	return len >= SROCE_ZCOPY_MIN && qp->type == IB_QPT_RC && qp->user &&
	       sroce_av_is_local(av);
}

/* Headers only: the caller appends the payload, then sroce_pkt_ref_end(). */
struct sk_buff *sroce_build_pkt_ref(struct sroce_qp *qp,
				    const struct sroce_av *av,
				    struct sroce_pkt_hdrs *h, u32 payload_len)
{
	return sroce_build(qp, av, h, payload_len, NULL);
}

/* Pad and ICRC room after the referenced payload. */
int sroce_pkt_ref_end(struct sk_buff *skb, const struct sroce_pkt_hdrs *h)
{
	return sroce_txbuf_trailer(skb, h->bth.padcnt + SROCE_ICRC_BYTES);
}

/*
 * The headers of packet @i of train @t (struct sroce_train), whose first
 * packet has @h0: a MIDDLE of the same message at the next PSNs.
 */
void sroce_train_hdrs(const struct sroce_pkt_hdrs *h0,
		      const struct sroce_train *t, u32 i,
		      struct sroce_pkt_hdrs *h)
{
	*h = *h0;
	h->payload_len = t->seg;
	h->bth.ackreq = (t->ackreq >> i) & 1;
	if (!i)
		return;
	switch (h0->bth.opcode) {
	case SROCE_OP_RC_SEND_FIRST:
		h->bth.opcode = SROCE_OP_RC_SEND_MIDDLE;
		break;
	case SROCE_OP_RC_RDMA_WRITE_FIRST:
		h->bth.opcode = SROCE_OP_RC_RDMA_WRITE_MIDDLE;
		break;
	case SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST:
		h->bth.opcode = SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
		break;
	}
	h->info = sroce_opcode_info(h->bth.opcode);
	h->hdr_len = h->info->hdr_len;
	h->bth.psn = sroce_psn_add(h0->bth.psn, i);
	memset(&h->reth, 0, sizeof(h->reth));
	memset(&h->aeth, 0, sizeof(h->aeth));
}

/*
 * One trace event per packet, a train's too: @h0 is the skb's first
 * packet, @len its length.  @tx picks the event.
 */
void sroce_trace_pkts(struct sroce_dev *sdev, const struct sroce_pkt_hdrs *h0,
		      const struct sroce_train *t, u32 len, bool tx)
{
	struct sroce_pkt_hdrs h;
	u32 i;

	for (i = 0; i < max_t(u32, t->pkts, 1); i++) {
		if (t->pkts > 1) {
			sroce_train_hdrs(h0, t, i, &h);
			len = h.hdr_len + h.payload_len + SROCE_ICRC_BYTES;
		} else {
			h = *h0;
		}
		if (tx)
			trace_sroce_pkt_tx(sdev, &h, len);
		else
			trace_sroce_pkt_rx(sdev, &h, len);
	}
}

/* A train as only we build one (sroce_req_send_train, sroce_resp_read_train). */
bool sroce_train_ok(const struct sroce_train *t,
		    const struct sroce_pkt_hdrs *h0)
{
	switch (h0->bth.opcode) {
	case SROCE_OP_RC_SEND_FIRST:
	case SROCE_OP_RC_SEND_MIDDLE:
	case SROCE_OP_RC_RDMA_WRITE_FIRST:
	case SROCE_OP_RC_RDMA_WRITE_MIDDLE:
	case SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST:
	case SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE:
		break;
	default:
		return false;
	}
	return t->pkts <= SROCE_TRAIN_PKTS && t->seg &&
	       h0->payload_len == (u32)t->pkts * t->seg && !h0->bth.padcnt &&
	       t->done == 0 && !t->dropped;
}

int sroce_send_ack(struct sroce_qp *qp, u32 psn, u8 syndrome)
{
	struct sroce_pkt_hdrs h = {};
	struct sk_buff *skb;
	u8 *payload;

	h.bth.opcode = SROCE_OP_RC_ACKNOWLEDGE;
	h.bth.dqpn = qp->dest_qpn;
	h.bth.psn = psn & SROCE_PSN_MASK;
	h.aeth.syndrome = syndrome;
	h.aeth.msn = qp->resp.msn & SROCE_PSN_MASK;
	skb = sroce_build_pkt(qp, &qp->av, &h, 0, &payload);
	if (!skb)
		return -ENOMEM;
	return sroce_pkt_send(qp->sdev, &qp->av, &qp->dst_cache, qp->sport, skb);
}

void sroce_sge_seek(const struct sroce_sge *sge, u32 num_sge, u32 off,
		    u32 *cur_sge, u32 *sge_off)
{
	u32 i = 0;

	while (i < num_sge && off >= sge[i].length) {
		off -= sge[i].length;
		i++;
	}
	*cur_sge = i;
	*sge_off = i < num_sge ? off : 0;
}

/*
 * A local SGE failed its L_Key check: why, for `module sroce +p`.  An MR
 * deregistered or invalidated with WQEs still using it shows up here.
 */
static void sroce_sge_dbg(struct sroce_qp *qp, const struct sroce_sge *s,
			  u64 va, u32 n, bool found, int err)
{
	ibdev_dbg_ratelimited(&qp->sdev->ib_dev,
			      "qp %#x: lkey %#x va %#llx len %u: %s (%d): local protection error\n",
			      qp->qpn, s->lkey, va, n,
			      !found ? "no valid MR has this key (deregistered or invalidated?)" :
			      err == -EFAULT ? "outside the MR" : "MR not valid, another PD or no access",
			      err);
}

/*
 * One piece by reference into a sroce_build_pkt_ref() skb: one user MR
 * per packet, which the packet holds.  -EOPNOTSUPP (not a user MR) or
 * -E2BIG (another MR, or too many pieces): copy instead.
 */
int sroce_pkt_ref_mr(struct sk_buff *skb, struct sroce_mr *mr, u64 va, u32 n)
{
	struct sroce_mr *held = sroce_pkt_zc_mr(skb);

	if (mr->kind != SROCE_MR_USER)
		return -EOPNOTSUPP;
	if (held && held != mr)
		return -E2BIG;
	if (!held)
		sroce_pkt_zc_hold(skb, mr);
	return sroce_mr_ref_skb(mr, va, n, skb);
}

/*
 * Gather len bytes of the SGE list, advancing the cursor: copied into dst,
 * or, without dst, appended to skb by reference (sroce_mr_ref_skb).
 */
static int sroce_sge_gather(struct sroce_qp *qp, const struct sroce_sge *sge,
			    u32 num_sge, u32 *cur_sge, u32 *sge_off, u8 *dst,
			    struct sk_buff *skb, u32 len)
{
	while (len) {
		const struct sroce_sge *s;
		struct sroce_mr *mr;
		u32 n;
		int err;

		if (*cur_sge >= num_sge)
			return -EFAULT;
		s = &sge[*cur_sge];
		n = min(len, s->length - *sge_off);
		if (n) {
			mr = sroce_mr_get(qp->sdev, s->lkey);
			if (!mr) {
				sroce_sge_dbg(qp, s, s->addr + *sge_off, n, false,
					      -EACCES);
				return -EACCES;
			}
			err = sroce_mr_check(mr, qp->pd, s->addr + *sge_off, n, 0);
			if (err)
				sroce_sge_dbg(qp, s, s->addr + *sge_off, n, true, err);
			else if (dst)
				err = sroce_mr_copy(mr, s->addr + *sge_off, dst, n,
						    false);
			else
				err = sroce_pkt_ref_mr(skb, mr, s->addr + *sge_off, n);
			sroce_mr_put(mr);
			if (err)
				return err;
		}
		if (dst)
			dst += n;
		len -= n;
		*sge_off += n;
		if (*sge_off == s->length) {
			(*cur_sge)++;
			*sge_off = 0;
		}
	}
	return 0;
}

int sroce_sge_copy_out(struct sroce_qp *qp, const struct sroce_sge *sge,
		       u32 num_sge, u32 *cur_sge, u32 *sge_off, u8 *dst,
		       u32 len)
{
	return sroce_sge_gather(qp, sge, num_sge, cur_sge, sge_off, dst, NULL,
				len);
}

/*
 * As sroce_sge_copy_out, by reference into a sroce_build_pkt_ref() skb.
 * -EOPNOTSUPP (not a user MR) or -E2BIG (more than one MR, or too many
 * pieces): copy instead.
 */
int sroce_sge_ref_out(struct sroce_qp *qp, const struct sroce_sge *sge,
		      u32 num_sge, u32 *cur_sge, u32 *sge_off,
		      struct sk_buff *skb, u32 len)
{
	return sroce_sge_gather(qp, sge, num_sge, cur_sge, sge_off, NULL, skb,
				len);
}

/*
 * Scatter len bytes into the SGE list, advancing the cursor: from skb (at
 * skb_off) when skb is given, else from buf.
 */
static int sroce_sge_scatter(struct sroce_qp *qp, struct sroce_pd *pd,
			     const struct sroce_sge *sge, u32 num_sge,
			     u32 *cur_sge, u32 *sge_off,
			     const struct sk_buff *skb, u32 skb_off,
			     const u8 *buf, u32 len)
{
	u32 done = 0;

	while (done < len) {
		const struct sroce_sge *s;
		struct sroce_mr *mr;
		u64 va;
		u32 n;
		int err;

		if (*cur_sge >= num_sge)
			return -EFAULT;
		s = &sge[*cur_sge];
		va = s->addr + *sge_off;
		n = min(len - done, s->length - *sge_off);
		if (n) {
			mr = sroce_mr_get(qp->sdev, s->lkey);
			if (!mr) {
				sroce_sge_dbg(qp, s, va, n, false, -EACCES);
				return -EACCES;
			}
			err = sroce_mr_check(mr, pd, va, n, IB_ACCESS_LOCAL_WRITE);
			if (err)
				sroce_sge_dbg(qp, s, va, n, true, err);
			else
				err = skb ? sroce_mr_from_skb(mr, va, skb,
							      skb_off + done, n) :
					    sroce_mr_copy(mr, va, (u8 *)buf + done,
							  n, true);
			sroce_mr_put(mr);
			if (err)
				return err;
		}
		done += n;
		*sge_off += n;
		if (*sge_off == s->length) {
			(*cur_sge)++;
			*sge_off = 0;
		}
	}
	return 0;
}

int sroce_sge_copy_in(struct sroce_qp *qp, struct sroce_pd *pd,
		      const struct sroce_sge *sge, u32 num_sge, u32 *cur_sge,
		      u32 *sge_off, const struct sk_buff *skb, u32 off, u32 len)
{
	return sroce_sge_scatter(qp, pd, sge, num_sge, cur_sge, sge_off, skb,
				 off, NULL, len);
}

int sroce_sge_write(struct sroce_qp *qp, struct sroce_pd *pd,
		    const struct sroce_sge *sge, u32 num_sge, u32 *cur_sge,
		    u32 *sge_off, const void *buf, u32 len)
{
	return sroce_sge_scatter(qp, pd, sge, num_sge, cur_sge, sge_off, NULL,
				 0, buf, len);
}

/* Local ACK timeout: 4.096 us * 2^timeout, floored for slow guests. */
u32 sroce_retrans_jiffies(const struct sroce_qp *qp)
{
	u64 us = 4096ULL << min_t(u8, qp->timeout, 31);

	us = min_t(u64, div_u64(us, 1000), 60 * USEC_PER_SEC);
	return max(usecs_to_jiffies(us), msecs_to_jiffies(SROCE_MIN_RETRANS_MS));
}
