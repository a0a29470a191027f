// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Driver details for the core's resource tracking: what `rdma resource
 * show qp|cq|mr -dd` prints after the core's own attributes.  A QP's are
 * read under eng_lock, as query_qp does, so they are one pass's state.
 */
#include <rdma/restrack.h>
#include <rdma/rdma_netlink.h>
#include <uapi/rdma/rdma_netlink.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

struct sroce_res_u32 {
	const char	*name;
	u32		val;
};

static int sroce_res_put(struct sk_buff *msg, const struct sroce_res_u32 *v,
			 int n)
{
	struct nlattr *table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	int i;

	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		if (rdma_nl_put_driver_u32(msg, v[i].name, v[i].val)) {
			nla_nest_cancel(msg, table);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, table);
	return 0;
}

static u32 sroce_res_rd_in_use(const struct sroce_qp *qp)
{
	u32 i, n = 0;

	if (!qp->resp.res)
		return 0;
	for (i = 0; i < qp->max_dest_rd_atomic; i++)
		n += qp->resp.res[i].valid;
	return n;
}

/* One pass's state of a QP, taken under eng_lock */
struct sroce_res_qp {
	u32 sq_outstanding, sq_unsent, rd_out, rd_used;
	u32 retry_timeout, retry_nak, rnr_rcvd, rnr_sent, nak_seq_sent;
	u32 rx_queued, tx_skbs, cpu;
};

static struct sroce_res_qp sroce_res_qp_snap(struct sroce_qp *qp)
{
	struct sroce_res_qp s;

	mutex_lock(&qp->eng_lock);
	s = (struct sroce_res_qp) {
		.sq_outstanding = qp->sq.head - qp->sq.comp,
		.sq_unsent = qp->sq.head - qp->sq.req,
		.rd_out = qp->req.rd_outstanding,
		.rd_used = sroce_res_rd_in_use(qp),
		.retry_timeout = qp->stats.retry_timeout,
		.retry_nak = qp->stats.retry_nak,
		.rnr_rcvd = qp->stats.rnr_retry,
		.rnr_sent = qp->stats.rnr_nak_sent,
		.nak_seq_sent = qp->stats.nak_seq_sent,
		.rx_queued = skb_queue_len(&qp->req_rxq) +
			     skb_queue_len(&qp->resp_rxq),
		.tx_skbs = atomic_read(&qp->skb_out),
		.cpu = qp->cpu,
	};
	sroce_qp_unlock(qp);
	return s;
}

int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	const struct sroce_res_qp s = sroce_res_qp_snap(to_sqp(ibqp));
	const struct sroce_res_u32 v[] = {
		{ "sq_outstanding", s.sq_outstanding },
		{ "sq_unsent", s.sq_unsent },
		{ "rd_atomic_out", s.rd_out },
		{ "resp_rd_atomic_used", s.rd_used },
		{ "retry_timeout", s.retry_timeout },
		{ "retry_nak", s.retry_nak },
		{ "rnr_nak_rcvd", s.rnr_rcvd },
		{ "rnr_nak_sent", s.rnr_sent },
		{ "nak_seq_sent", s.nak_seq_sent },
		{ "rx_queued", s.rx_queued },
		{ "tx_skbs", s.tx_skbs },
		{ "cpu", s.cpu },
	};

	return sroce_res_put(msg, v, ARRAY_SIZE(v));
}

int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_res_u32 v[] = {
		{ "cqe_queued", sroce_cq_fill(cq) },
		{ "overflow", READ_ONCE(cq->overflow) },
	};

	return sroce_res_put(msg, v, ARRAY_SIZE(v));
}

int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_res_u32 v[] = {
		{ "npages", READ_ONCE(mr->npages) },
		{ "page_size", mr->npages ? 1U << READ_ONCE(mr->page_shift) : 0 },
		{ "mw_bound", READ_ONCE(mr->n_mw) },
	};

	return sroce_res_put(msg, v, ARRAY_SIZE(v));
}
